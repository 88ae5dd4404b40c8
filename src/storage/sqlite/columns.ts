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

/** Converts a stored SQLite value back to the field's JS value. */
export const fromSqlite = (field: FieldPlan): ((value: unknown) => unknown) => {
  if (isJson(field)) return (v) => (v === null ? null : JSON.parse(v as string));
  if (field.type === 'boolean') return (v) => (v === null ? null : v === 1);
  return (v) => v;
};

/** The columns of a resource's table, system columns first. */
export const tableColumns = (resource: ResourcePlan): Array<{ name: string; type: SqliteType; field?: FieldPlan }> => [
  { name: 'id', type: resource.idStyle === 'integer' ? 'INTEGER' : 'TEXT' },
  { name: 'created_at', type: 'TEXT' },
  { name: 'updated_at', type: 'TEXT' },
  { name: 'revision', type: 'INTEGER' },
  ...resource.fields.map((field) => ({ name: field.column, type: sqliteType(field), field })),
];
