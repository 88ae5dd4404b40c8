import { code, type DocBlock, type Inline, joinSpans, type Span, table } from '../docs-model.ts';
import { derivedPhrase } from './field-notes.ts';
import type { FieldSpec } from './field-schema.ts';

/** The columns of every field table in the document: resources, transition inputs, payloads. */
export const FIELD_COLUMNS = ['Field', 'Type', 'Format', 'Required', 'Default', 'Constraints', 'Description'];

/** `string`, `ref → Customer`, `array of object`. */
export const fieldType = (f: FieldSpec): string => {
  if (f.type === 'ref') return f.to ? `ref → ${f.to}` : 'ref';
  if (f.type === 'array') return f.items ? `array of ${fieldType(f.items)}` : 'array';
  return f.type;
};

const json = (value: unknown): string => JSON.stringify(value) ?? String(value);

/** Every constraint a field carries, as short phrases. */
export const fieldConstraints = (f: FieldSpec): Span[] => {
  const out: Span[][] = [];
  const add = (...spans: Span[]) => out.push(spans);
  if (f.values) add('one of ', ...joinSpans(f.values.map(code), ', '));
  if (f.min !== undefined) add(`min ${f.min}`);
  if (f.max !== undefined) add(`max ${f.max}`);
  if (f.minLength !== undefined) add(`minLength ${f.minLength}`);
  if (f.maxLength !== undefined) add(`maxLength ${f.maxLength}`);
  if (f.minItems !== undefined) add(`minItems ${f.minItems}`);
  if (f.maxItems !== undefined) add(`maxItems ${f.maxItems}`);
  if (f.uniqueItems) add('unique items');
  if (f.precision !== undefined) add(`precision ${f.precision}`);
  if (f.scale !== undefined) add(`scale ${f.scale}`);
  if (f.pattern !== undefined) add('matches ', code(f.pattern));
  if (f.unique) add('unique');
  if (f.nullable) add('nullable');
  if (f.readOnly) add('read-only');
  if (f.writeOnly) add('write-only');
  if (f.type === 'ref') add(`on delete ${f.onDelete ?? 'restrict'}`);
  if (f.readableBy) add('readable by ', ...joinSpans(f.readableBy.map(code)));
  if (f.writableBy) add('writable by ', ...joinSpans(f.writableBy.map(code)));
  if (f.derive) add(`derived: ${derivedPhrase(f.derive)}`);
  if (f.normalize?.length) add('normalised: ', ...joinSpans(f.normalize.map(code), ', '));
  if (f.example !== undefined) add('example ', code(json(f.example)));
  return out.flatMap((spans, i) => (i === 0 ? spans : ['; ', ...spans]));
};

/** One row per field, nested object fields flattened as `lines[].qty` and `address.city`. */
export const fieldRows = (fields: Readonly<Record<string, FieldSpec>>, prefix = ''): Inline[][] =>
  Object.entries(fields).flatMap(([name, f]) => {
    const path = `${prefix}${name}`;
    const row: Inline[] = [
      code(path),
      fieldType(f),
      f.format ?? (f.pattern !== undefined ? 'pattern' : ''),
      f.required ? 'yes' : 'no',
      f.default === undefined ? '' : code(json(f.default)),
      fieldConstraints(f),
      f.description ?? '',
    ];
    const nested =
      f.type === 'object' && f.fields
        ? fieldRows(f.fields, `${path}.`)
        : f.type === 'array' && f.items?.type === 'object' && f.items.fields
          ? fieldRows(f.items.fields, `${path}[].`)
          : [];
    return [row, ...nested];
  });

/** A field table, or undefined for no fields. */
export const fieldTable = (
  fields: Readonly<Record<string, FieldSpec>> | undefined,
  leading: readonly (readonly Inline[])[] = [],
): DocBlock | undefined => {
  const rows = [...leading, ...fieldRows(fields ?? {})];
  return rows.length ? table(FIELD_COLUMNS, rows) : undefined;
};

/** A compact one-line shape of a payload: `paymentRef` (string, required), `note` (string). */
export const fieldSummary = (fields: Readonly<Record<string, FieldSpec>> | undefined): Span[] =>
  Object.entries(fields ?? {}).flatMap(([name, f], i): Span[] => [
    ...(i ? [', '] : []),
    code(name),
    ` (${fieldType(f)}${f.required ? ', required' : ''})`,
  ]);
