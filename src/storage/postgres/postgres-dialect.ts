import { type Dialect, escapeLike } from '../sql/dialect.ts';

const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
/** Folds A–Z only, as SQLite's NOCASE does: lower() would follow the database's locale (é, İ, ß). */
const fold = (sql: string) => `translate(${sql}, '${UPPER}', '${UPPER.toLowerCase()}')`;

/**
 * PostgreSQL's SQL. Decimals are `numeric` and booleans `boolean` columns; JSON values are kept as the text the
 * service wrote (json, not jsonb: key order and spacing read back exactly as on SQLite).
 */
export const postgresDialect: Dialect = {
  name: 'postgres',
  placeholders: (sql) => {
    let n = 0;
    return sql.replace(/\?/g, () => `$${++n}`);
  },
  limitMarker: '?',
  literalLimit: true,
  bind: (v) => v,
  decimalValue: (c) => c,
  booleanValue: (c) => `(${c})::int`,
  unindexed: (c) => c,
  prefix: (c) => ({ sql: `${c} LIKE ? ESCAPE '\\'`, param: (p) => `${escapeLike(p)}%` }),
  contains: (c) => `strpos(${c}, ?) > 0`,
  arrayContains: (c) => `EXISTS (SELECT 1 FROM json_array_elements_text(${c}::json) AS e(v) WHERE e.v = (?)::text)`,
  refAsInteger: (c) => `CAST(${c} AS bigint)`,
  arrayItems: (c) => `json_array_elements_text(${c}::json) AS nf_e(value)`,
  byCodePoint: (e) => `${e} COLLATE "C"`,
  equalsFolded: (c) => `${fold(c)} = ${fold('?')}`,
  likeFolded: (c) => `${fold(c)} LIKE ${fold('?')} ESCAPE '\\'`,
};
