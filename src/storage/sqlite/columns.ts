import type { FieldPlan, ResourcePlan } from '../../plan/types.ts';

export { quote } from '../sql/dialect.ts';
export { SYSTEM_COLUMNS } from '../sql/list-sql.ts';

export type SqliteType = 'TEXT' | 'INTEGER' | 'REAL';

export const sqliteType = (field: FieldPlan): SqliteType => {
  switch (field.type) {
    case 'integer':
    case 'boolean':
      return 'INTEGER';
    case 'number':
      return 'REAL';
    default:
      return 'TEXT';
  }
};

const isJson = (field: FieldPlan) => field.type === 'object' || field.type === 'array' || field.type === 'json';

/** Converts a JS value to what SQLite stores for this field. */
export const toSqlite = (field: FieldPlan): ((value: unknown) => unknown) => {
  if (isJson(field)) return (v) => (v === null || v === undefined ? null : JSON.stringify(v));
  if (field.type === 'boolean') return (v) => (v === null || v === undefined ? null : v ? 1 : 0);
  return (v) => (v === undefined ? null : v);
};

const asStored = (v: unknown) => v;

/** Converts a stored SQLite value back to the field's JS value. */
export const fromSqlite = (field: FieldPlan): ((value: unknown) => unknown) => {
  if (isJson(field)) return (v) => (v === null ? null : JSON.parse(v as string));
  if (field.type === 'boolean') return (v) => (v === null ? null : v === 1);
  return asStored;
};

/**
 * A row from a raw (array-mode) result, its columns in table order (system columns first). Compiled per table to
 * code with each field's name written out, so that every property store is a named one: the generic loop stored
 * by computed name, a megamorphic store per field of every row read.
 */
export const compileRowReader = (fields: readonly FieldPlan[]): ((raw: unknown[]) => Record<string, unknown>) => {
  const readers = fields.map(fromSqlite);
  const lines = fields.map((f, i) => {
    const value = `raw[${i + 4}]`;
    const converted = readers[i] === asStored ? 'v' : `readers[${i}](v)`;
    return `v = ${value}; row[${JSON.stringify(f.name)}] = v === null || v === undefined ? null : ${converted};`;
  });
  const body = `return (raw) => {
    const row = { id: String(raw[0]), createdAt: raw[1], updatedAt: raw[2], revision: raw[3] };
    let v;
    ${lines.join('\n    ')}
    return row;
  };`;
  return new Function('readers', body)(readers);
};

/** The columns of a resource's table, system columns first. */
export const tableColumns = (resource: ResourcePlan): Array<{ name: string; type: SqliteType; field?: FieldPlan }> => [
  { name: 'id', type: resource.idStyle === 'integer' ? 'INTEGER' : 'TEXT' },
  { name: 'created_at', type: 'TEXT' },
  { name: 'updated_at', type: 'TEXT' },
  { name: 'revision', type: 'INTEGER' },
  ...resource.fields.map((field) => ({ name: field.column, type: sqliteType(field), field })),
];
