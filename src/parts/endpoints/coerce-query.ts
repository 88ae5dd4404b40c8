import type { FieldSpec } from '../resources/field-schema.ts';

/** A number as JSON writes it (leading zeros allowed): not hex, not `Infinity`, no spaces, no `1_000`. */
export const isNumberText = (text: string): boolean => /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(text);

/** Query strings carry text: turn declared integer, number and boolean parameters into their types. */
export const coerceQuery = (
  fields: Readonly<Record<string, FieldSpec>>,
  query: Readonly<Record<string, string | string[] | undefined>>,
): Record<string, unknown> => {
  const out: Record<string, unknown> = {};
  for (const [name, raw] of Object.entries(query)) {
    const field = fields[name];
    if (raw === undefined) continue;
    if (!field || Array.isArray(raw)) {
      out[name] = raw;
      continue;
    }
    // Anything else stays text, so that validation refuses it as the wrong type rather than reading 0x10 as 16.
    if ((field.type === 'integer' || field.type === 'number') && isNumberText(raw) && Number.isFinite(Number(raw)))
      out[name] = Number(raw);
    else if (field.type === 'boolean' && (raw === 'true' || raw === 'false')) out[name] = raw === 'true';
    else out[name] = raw;
  }
  return out;
};
