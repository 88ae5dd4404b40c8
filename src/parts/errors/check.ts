import { type CheckContext, isRecord, recordEntries } from '../../spec/check-context.ts';
import type { Raw } from '../resources/lookup.ts';
import { BUILT_IN_ERRORS } from './catalogue.ts';

/** Semantic checks of part: errors. */
export const checkErrors = (ctx: CheckContext): void => {
  const errors = isRecord(ctx.spec.errors) ? ctx.spec.errors : {};
  if (errors.format === 'custom' && errors.payload === undefined)
    ctx.report('missing-error-payload', ['errors', 'format'], 'format: custom needs a `payload` template');
  for (const [code, entry] of recordEntries<Raw>(errors.catalogue)) {
    if (Object.hasOwn(BUILT_IN_ERRORS, code))
      ctx.report('error-code-clash', ['errors', 'catalogue', code], `"${code}" is a built-in error code`, 'key');
    if (typeof entry.status === 'number' && (entry.status < 400 || entry.status > 599))
      ctx.report(
        'error-status-out-of-range',
        ['errors', 'catalogue', code, 'status'],
        `status ${entry.status} is not an error status (400–599)`,
      );
  }
};
