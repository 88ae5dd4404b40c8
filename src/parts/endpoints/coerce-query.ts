import type { FieldSpec } from '../resources/field-schema.ts';

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
    if ((field.type === 'integer' || field.type === 'number') && raw.trim() !== '' && Number.isFinite(Number(raw)))
      out[name] = Number(raw);
    else if (field.type === 'boolean' && (raw === 'true' || raw === 'false')) out[name] = raw === 'true';
    else out[name] = raw;
  }
  return out;
};
