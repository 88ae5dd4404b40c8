/**
 * The error payload template language: JSON in which "{name}" placeholders are filled from the problem, a key
 * ending in "?" is left out when its value is empty, `{"$each": T}` is one T per failing field, and
 * `{"$byField": T, "$other": key}` maps each failing field to the list of its T (an error with no failing field
 * lands under `$other`, default the code). One language renders the three presets and any custom shape.
 */

/** What a whole error offers a template. */
export const ERROR_PLACEHOLDERS = [
  'code',
  'status',
  'title',
  'detail',
  'message',
  'type',
  'instance',
  'resource',
  'field',
  'param',
  'documentation',
  'errors',
] as const;
/** What one failing field offers a template inside `$each` and `$byField` (the error's values stay readable). */
export const FIELD_PLACEHOLDERS = ['field', 'pointer', 'code', 'message', 'resource'] as const;

export type TemplateValues = Readonly<Record<string, unknown>>;

/** One failing field as templates see it: its name, pointer, (renamed) code and message. */
export interface TemplateField {
  readonly field: string;
  readonly pointer: string;
  readonly code: string;
  readonly message: string;
}

const PLACEHOLDER = /\{(\w+)\}/g;
const WHOLE = /^\{(\w+)\}$/;

const isEmpty = (v: unknown) =>
  v === undefined ||
  v === null ||
  v === '' ||
  (Array.isArray(v) && v.length === 0) ||
  (typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0);

const fill = (template: string, values: TemplateValues): unknown => {
  const whole = WHOLE.exec(template);
  if (whole?.[1] && whole[1] in values) return values[whole[1]];
  return template.replace(PLACEHOLDER, (m, k: string) => (k in values ? String(values[k] ?? '') : m));
};

/** Fills a template with one error's values and its failing fields. */
export const renderTemplate = (
  template: unknown,
  values: TemplateValues,
  fields: readonly TemplateField[],
): unknown => {
  if (typeof template === 'string') return fill(template, values);
  if (Array.isArray(template)) return template.map((t) => renderTemplate(t, values, fields));
  if (!template || typeof template !== 'object') return template;
  const node = template as Record<string, unknown>;
  if ('$each' in node) return fields.map((f) => renderTemplate(node.$each, { ...values, ...f }, []));
  if ('$byField' in node) {
    const out: Record<string, unknown[]> = {};
    if (fields.length === 0) {
      const key = String(fill(String(node.$other ?? '{code}'), values));
      out[key] = [renderTemplate(node.$byField, values, [])];
    }
    for (const f of fields) {
      const list = out[f.field] ?? [];
      list.push(renderTemplate(node.$byField, { ...values, ...f }, []));
      out[f.field] = list;
    }
    return out;
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    const optional = k.endsWith('?');
    const key = String(fill(optional ? k.slice(0, -1) : k, values));
    const value = renderTemplate(v, values, fields);
    if (!(optional && isEmpty(value))) out[key] = value;
  }
  return out;
};

/** Every placeholder a template uses, with where it sits (for `ninefold check`); `inField` inside $each/$byField. */
export const placeholdersOf = (
  template: unknown,
  at: Array<string | number> = [],
  inField = false,
): Array<{ name: string; at: Array<string | number>; inField: boolean }> => {
  if (typeof template === 'string')
    return [...template.matchAll(PLACEHOLDER)].map((m) => ({ name: m[1] as string, at, inField }));
  if (Array.isArray(template)) return template.flatMap((t, i) => placeholdersOf(t, [...at, i], inField));
  if (!template || typeof template !== 'object') return [];
  return Object.entries(template).flatMap(([k, v]) => [
    ...(k.startsWith('$') ? [] : placeholdersOf(k.endsWith('?') ? k.slice(0, -1) : k, at, inField)),
    ...placeholdersOf(v, [...at, k], inField || k === '$each' || k === '$byField'),
  ]);
};
