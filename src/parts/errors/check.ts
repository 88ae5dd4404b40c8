import { type CheckContext, isRecord, recordEntries } from '../../spec/check-context.ts';
import { closest } from '../../spec/closest.ts';
import type { Raw } from '../resources/lookup.ts';
import { BUILT_IN_ERRORS } from './catalogue.ts';
import { FIELD_ERROR_CODES } from './field-codes.ts';
import { ERROR_PLACEHOLDERS, FIELD_PLACEHOLDERS, placeholdersOf } from './payload-template.ts';

const hint = (word: string, options: readonly string[]) => {
  const near = closest(word, options);
  return near ? ` (did you mean "${near}"?)` : '';
};

/** Every placeholder of the payload template names a value the renderer fills where it stands. */
const checkPayload = (ctx: CheckContext, payload: unknown) => {
  for (const { name, at, inField } of placeholdersOf(payload)) {
    const known: readonly string[] = inField ? [...ERROR_PLACEHOLDERS, ...FIELD_PLACEHOLDERS] : ERROR_PLACEHOLDERS;
    if (!known.includes(name))
      ctx.report(
        'unknown-error-placeholder',
        ['errors', 'payload', ...at],
        `"{${name}}" names nothing an error has${hint(name, known)}; ${inField ? 'in $each/$byField: ' : ''}${known.map((k) => `{${k}}`).join(', ')}`,
      );
  }
};

/** Semantic checks of part: errors. */
export const checkErrors = (ctx: CheckContext): void => {
  const errors = isRecord(ctx.spec.errors) ? ctx.spec.errors : {};
  if (errors.format === 'custom' && errors.payload === undefined)
    ctx.report('missing-error-payload', ['errors', 'format'], 'format: custom needs a `payload` template');
  if (errors.payload !== undefined && (errors.format ?? 'problem+json') === 'problem+json')
    ctx.report(
      'error-payload-ignored',
      ['errors', 'payload'],
      'a payload template applies with format: custom or a preset (per-field, stripe, github), not problem+json',
      'key',
    );
  if (errors.payload !== undefined) checkPayload(ctx, errors.payload);
  const catalogue = isRecord(errors.catalogue) ? errors.catalogue : {};
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
  const codes = [...Object.keys(BUILT_IN_ERRORS), ...Object.keys(catalogue)];
  for (const key of ['remap', 'types'] as const) {
    if (!isRecord(errors[key])) continue;
    for (const code of Object.keys(errors[key])) {
      if (codes.includes(code) || (key === 'types' && ['4xx', '5xx'].includes(code))) continue;
      ctx.report(
        'unknown-error-remap',
        ['errors', key, code],
        `"${code}" is not a code of the catalogue${key === 'types' ? ' nor 4xx or 5xx' : ''}${hint(code, codes)}`,
        'key',
      );
    }
  }
  const fieldCodes = Object.keys(FIELD_ERROR_CODES);
  for (const key of ['fieldCodes', 'fieldMessages'] as const) {
    if (!isRecord(errors[key])) continue;
    for (const code of Object.keys(errors[key]))
      if (!fieldCodes.includes(code) && !(key === 'fieldCodes' && code === '*'))
        ctx.report(
          'unknown-field-code',
          ['errors', key, code],
          `"${code}" is not a field code${hint(code, fieldCodes)}`,
          'key',
        );
  }
};
