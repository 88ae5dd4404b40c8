import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { ApiError, type FieldError } from '../parts/errors/api-error.ts';
import { decimalRangeKeyword, type JsonSchema } from '../parts/resources/json-schema.ts';

// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ??
  addFormatsModule) as unknown as (ajv: Ajv) => Ajv;

/** One ajv per server: every body validator is compiled from it at start-up. */
export const createAjv = (): Ajv => {
  const ajv = new Ajv({
    allErrors: true,
    strict: false,
    coerceTypes: false,
    useDefaults: false,
    allowUnionTypes: true,
  });
  addFormats(ajv);
  ajv.addKeyword(decimalRangeKeyword);
  return ajv;
};

const CODES: Record<string, string> = {
  required: 'required',
  type: 'invalid_type',
  enum: 'invalid_enum',
  const: 'invalid_enum',
  format: 'invalid_format',
  pattern: 'invalid_format',
  minimum: 'out_of_range',
  maximum: 'out_of_range',
  exclusiveMinimum: 'out_of_range',
  exclusiveMaximum: 'out_of_range',
  minLength: 'invalid_length',
  maxLength: 'invalid_length',
  minItems: 'invalid_count',
  maxItems: 'invalid_count',
  uniqueItems: 'duplicate_items',
  additionalProperties: 'unknown_field',
};

const escapePointer = (s: string) => s.replaceAll('~', '~0').replaceAll('/', '~1');

const toFieldError = (e: ErrorObject): FieldError => {
  const params = e.params as Record<string, unknown>;
  if (e.keyword === 'required') {
    const name = String(params.missingProperty);
    return { pointer: `#${e.instancePath}/${escapePointer(name)}`, code: 'required', message: `${name} is required` };
  }
  if (e.keyword === 'additionalProperties') {
    const name = String(params.additionalProperty);
    return {
      pointer: `#${e.instancePath}/${escapePointer(name)}`,
      code: 'unknown_field',
      message: `${name} is not a field of this resource`,
    };
  }
  const message =
    e.keyword === 'enum'
      ? `must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`
      : (e.message ?? 'is invalid');
  return { pointer: `#${e.instancePath}`, code: CODES[e.keyword] ?? 'invalid', message };
};

export type BodyValidator = (body: unknown) => ApiError | undefined;

/**
 * Compiles a body validator. Read-only and system fields get `read_only_field`, unknown fields
 * `unknown_field`, everything else `validation_failed` — each listing every failing field with a pointer.
 */
export const compileBodyValidator = (
  ajv: Ajv,
  schema: JsonSchema,
  readOnly: ReadonlySet<string> = new Set(),
): BodyValidator => {
  const validate = ajv.compile(schema);
  return (body) => {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      return new ApiError('validation_failed', 'The body must be a JSON object.', [
        { pointer: '#', code: 'invalid_type', message: 'must be an object' },
      ]);
    }
    const locked = Object.keys(body).filter((k) => readOnly.has(k));
    if (locked.length) {
      return new ApiError(
        'read_only_field',
        `These fields are set by the service and cannot be written: ${locked.join(', ')}.`,
        locked.map((k) => ({ pointer: `#/${escapePointer(k)}`, code: 'read_only', message: `${k} is read-only` })),
      );
    }
    if (validate(body)) return undefined;
    const errors = (validate.errors ?? []).filter((e) => e.keyword !== 'if' && e.keyword !== 'anyOf').map(toFieldError);
    const unknown = errors.filter((e) => e.code === 'unknown_field' && e.pointer.lastIndexOf('/') === 1);
    if (unknown.length && unknown.length === errors.length) {
      return new ApiError(
        'unknown_field',
        `Unknown field(s): ${unknown.map((e) => e.pointer.slice(2)).join(', ')}.`,
        unknown,
      );
    }
    const range = errors.find((e) => e.code === 'out_of_range' && /9007199254740991/.test(e.message));
    if (range && errors.length === 1)
      return new ApiError('number_out_of_range', 'An integer is outside ±(2^53−1).', errors);
    return new ApiError('validation_failed', `${errors.length} field(s) failed validation.`, dedupe(errors));
  };
};

const dedupe = (errors: FieldError[]): FieldError[] => {
  const seen = new Set<string>();
  return errors.filter((e) => {
    const key = `${e.pointer}|${e.code}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
};
