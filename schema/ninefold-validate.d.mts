// The types of ninefold-validate.mjs, the spec language's validator that `npm run gen` compiles with Ajv.
import type { ValidateFunction } from 'ajv';

export declare const validate: ValidateFunction;
export default validate;
