import type { Dialect } from '../sql/dialect.ts';

/** GLOB has no escape character: a wildcard stands for itself inside brackets. */
const escapeGlob = (value: string) => value.replace(/[*?[]/g, (c) => `[${c}]`);

/**
 * SQLite's SQL. Strings compare exactly, as `=` and unique indexes do: a prefix is a GLOB (case-sensitive, and able
 * to read a range of the field's index), contains an instr(). The folding operators fold A–Z only: LIKE and NOCASE,
 * like SQLite's lower(), know no other case pairs without ICU, so é, İ and ß compare exactly.
 */
export const sqliteDialect: Dialect = {
  name: 'sqlite',
  placeholders: (sql) => sql,
  // An expression, not a bare parameter: SQLite then plans without the value and keeps the prepared statement.
  limitMarker: '(? + 0)',
  literalLimit: false,
  bind: (v) => (typeof v === 'boolean' ? (v ? 1 : 0) : v),
  decimalValue: (c) => `CAST(${c} AS REAL)`,
  booleanValue: (c) => c,
  unindexed: (c) => (c.startsWith('"') ? `+${c}` : c),
  prefix: (c) => ({ sql: `${c} GLOB ?`, param: (p) => `${escapeGlob(p)}*` }),
  contains: (c) => `instr(${c}, ?) > 0`,
  arrayContains: (c) => `EXISTS (SELECT 1 FROM json_each(${c}) WHERE value = ?)`,
  refAsInteger: (c) => c,
  arrayItems: (c) => `json_each(${c}) AS nf_e`,
  byCodePoint: (e) => e,
  equalsFolded: (c) => `${c} = ? COLLATE NOCASE`,
  likeFolded: (c) => `${c} LIKE ? ESCAPE '\\'`,
};
