import type { ResourcePlan } from '../../plan/types.ts';

/**
 * What differs between the SQL of two databases, as far as the shared statement builders (list-sql.ts) go: one
 * small object per backend (sqlite/sqlite-dialect.ts, postgres/postgres-dialect.ts). Builders write `?` for every
 * parameter; `placeholders` turns them into the backend's own markers.
 */
export interface Dialect {
  readonly name: 'sqlite' | 'postgres';
  /** The statement with its `?` markers renumbered for the backend (`$1`, `$2`, … on PostgreSQL). */
  placeholders(sql: string): string;
  /**
   * A LIMIT's `?`. SQLite (3.53, as better-sqlite3 bundles it) plans with the value bound to a bare `LIMIT ?`, and
   * so marks the statement to be prepared again whenever that parameter is bound: at every run, which cost a fifth
   * of a list page's statement.
   */
  readonly limitMarker: string;
  /**
   * Whether a list page's LIMIT is written into the statement as its number instead of a parameter. PostgreSQL plans
   * a prepared statement afresh at every run while its LIMIT is a parameter: the generic plan, guessing a tenth of
   * the table for an unknown LIMIT, always looks dearer than a custom one, and planning a page of 20 cost 30-70 µs of
   * the backend's CPU per request, more than running it (bench/RESULTS.md). With the number in the text, from the sixth
   * run on a connection on it keeps the generic plan and skips planning. One statement per page size: the stores'
   * caches of statement shapes count each page size as a shape of its own.
   */
  readonly literalLimit: boolean;
  /** A JS value as a bound parameter (SQLite has no booleans: 1 and 0). */
  bind(value: unknown): unknown;
  /** A decimal column as a value that compares and sorts by number. */
  decimalValue(column: string): string;
  /** A boolean column as a number (the keyset cursor records booleans as 1 and 0 on every backend). */
  booleanValue(column: string): string;
  /**
   * A column compared by a range on a field the page is not sorted by: SQLite's unary `+` keeps its planner from
   * reading the range through the field's index and sorting it (walking in sort order wins for a page).
   */
  unindexed(column: string): string;
  /** Exact, case-sensitive prefix: the SQL, and the parameter it takes for a prefix. */
  prefix(column: string): { readonly sql: string; readonly param: (prefix: string) => string };
  /** Exact substring test (`?` the substring). */
  contains(column: string): string;
  /** Membership of `?` in a JSON array column. */
  arrayContains(column: string): string;
  /** A reference to an integer id, as the id column compares (PostgreSQL keeps ids bigint and references text). */
  refAsInteger(column: string): string;
  /** The items of a JSON array column as a FROM item `nf_e` with one text column, `value`. */
  arrayItems(column: string): string;
  /** A text expression ordered by code point, whatever the database's collation. */
  byCodePoint(expr: string): string;
  /** Equality folding A–Z only (`?` the value). */
  equalsFolded(column: string): string;
  /** LIKE folding A–Z only (`?` the pattern, `\` its escape). */
  likeFolded(column: string): string;
}

export const escapeLike = (value: string) => value.replace(/[\\%_]/g, (c) => `\\${c}`);

export const quote = (identifier: string): string => `"${identifier.replaceAll('"', '""')}"`;

/**
 * The SQL of `column` (a field of `resource`) to compare with the field `other` of `otherResource`: a reference to
 * an integer id compared with that id is cast to the id's type where the backend needs it.
 */
export const comparableColumn = (
  dialect: Dialect,
  resource: ResourcePlan,
  field: string,
  column: string,
  otherResource: ResourcePlan,
  other: string,
): string =>
  other === 'id' && otherResource.idStyle === 'integer' && resource.fieldsByName.get(field)?.ref?.idStyle === 'integer'
    ? dialect.refAsInteger(column)
    : column;
