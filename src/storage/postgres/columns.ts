import type { FieldPlan, ResourcePlan } from '../../plan/types.ts';
import type { ComputedSql } from '../sql/computed-sql.ts';

export type PgType = 'text' | 'bigint' | 'double precision' | 'boolean' | 'numeric';

/** What `information_schema.columns.data_type` says for each type the store declares. */
export const DATA_TYPE: Readonly<Record<PgType, string>> = {
  text: 'text',
  bigint: 'bigint',
  'double precision': 'double precision',
  boolean: 'boolean',
  numeric: 'numeric',
};

/** JSON values are kept as the text written (not jsonb): they read back byte for byte as on SQLite. */
export const pgType = (field: FieldPlan): PgType => {
  switch (field.type) {
    case 'integer':
      return 'bigint';
    case 'number':
      return 'double precision';
    case 'boolean':
      return 'boolean';
    case 'decimal':
      return 'numeric';
    default:
      return 'text';
  }
};

const isJson = (field: FieldPlan) => field.type === 'object' || field.type === 'array' || field.type === 'json';

/** A JS value as the parameter PostgreSQL stores for this field. */
export const toPg = (field: FieldPlan): ((value: unknown) => unknown) => {
  if (isJson(field)) return (v) => (v === null || v === undefined ? null : JSON.stringify(v));
  return (v) => (v === undefined ? null : v);
};

const asRead = (v: unknown) => v;

/** A stored value (as node-postgres reads it) back to the field's JS value. */
export const fromPg = (field: FieldPlan): ((value: unknown) => unknown) => {
  if (isJson(field)) return (v) => (v === null ? null : JSON.parse(v as string));
  return asRead;
};

/**
 * A row from a raw result (node-postgres' object row, by column name), then a list's computed columns (by alias).
 * Compiled per table, and per list shape with computed columns, to one object literal with each field's name written
 * out, as on SQLite (sqlite/columns.ts): the row is made in its final shape at once, not grown field by field and
 * then given its computed values by a loop of keyed stores.
 */
export const compileRowReader = (
  fields: readonly FieldPlan[],
  computed?: ComputedSql,
): ((raw: Record<string, unknown>) => Record<string, unknown>) => {
  const readers = fields.map(fromPg);
  const key = (name: string) => JSON.stringify(name);
  const values = fields.map((f, i) => {
    const value = `raw[${key(f.column)}]`;
    const converted = readers[i] === asRead ? value : `readers[${i}](${value})`;
    return `${key(f.name)}: ${value} === null || ${value} === undefined ? null : ${converted},`;
  });
  const extra = computed ? computed.reads((_, alias) => `raw[${key(alias)}]`) : [];
  const body = `return (raw) => ({
    id: String(raw.id), createdAt: raw.created_at, updatedAt: raw.updated_at, revision: raw.revision,
    ${[...values, ...extra].join('\n    ')}
  });`;
  return new Function('readers', body)(readers);
};

/** A stored value in the shape the shared conversions (sql/conversions.ts) read: SQLite's (booleans 1 and 0). */
export const asSqliteValue = (v: unknown): unknown => (typeof v === 'boolean' ? (v ? 1 : 0) : v);

/** A column type as DDL declares it: text compares byte for byte, as on SQLite, whatever the database's locale. */
export const ddlType = (type: string): string => (type === 'text' ? 'text COLLATE "C"' : type);

/** The columns of a resource's table, system columns first. */
export const tableColumns = (resource: ResourcePlan): Array<{ name: string; type: string; field?: FieldPlan }> => [
  { name: 'id', type: resource.idStyle === 'integer' ? 'bigint' : 'text' },
  { name: 'created_at', type: 'text' },
  { name: 'updated_at', type: 'text' },
  { name: 'revision', type: 'integer' },
  ...resource.fields.map((field) => ({ name: field.column, type: pgType(field), field })),
];
