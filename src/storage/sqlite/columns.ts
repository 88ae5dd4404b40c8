import type { FieldPlan, ResourcePlan } from '../../plan/types.ts';
import type { ComputedSql } from '../sql/computed-sql.ts';

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
 * A row from a raw (array-mode) result, its columns in table order (system columns first), then the list's computed
 * columns. Compiled per table (and per list shape with computed columns) to one object literal with each field's
 * name written out: the row is made in its final shape at once. Adding the fields one by one grew the row's property
 * store, and computed values set afterwards by a loop were keyed stores, megamorphic, each a shape transition.
 */
export const compileRowReader = (
  fields: readonly FieldPlan[],
  computed?: ComputedSql,
): ((raw: unknown[]) => Record<string, unknown>) => {
  const readers = fields.map(fromSqlite);
  const key = (name: string) => JSON.stringify(name);
  const values = fields.map((f, i) => {
    const value = `raw[${i + 4}]`;
    const converted = readers[i] === asStored ? value : `readers[${i}](${value})`;
    return `${key(f.name)}: ${value} === null || ${value} === undefined ? null : ${converted},`;
  });
  const offset = 4 + fields.length;
  const extra = computed ? computed.reads((slot) => `raw[${offset + slot}]`) : [];
  const body = `return (raw) => ({
    id: String(raw[0]), createdAt: raw[1], updatedAt: raw[2], revision: raw[3],
    ${[...values, ...extra].join('\n    ')}
  });`;
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
