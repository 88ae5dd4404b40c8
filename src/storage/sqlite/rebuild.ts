import type { Database } from 'better-sqlite3';
import { quote } from './columns.ts';

interface ColumnInfo {
  name: string;
  type: string;
  notnull: number;
  dflt_value: string | null;
  pk: number;
}

/**
 * Rebuilds a table with some columns retyped and their values rewritten, the SQLite way
 * (https://sqlite.org/lang_altertable.html#otheralter): create the new table, copy every row, drop the old table,
 * rename the new one, and recreate the old table's indexes and triggers from their SQL. Every other column, the
 * primary key, NOT NULL, defaults, STRICT and WITHOUT ROWID are kept. Runs inside the caller's transaction; a copy
 * that breaks a unique index fails when that index is recreated, and the caller's rollback undoes all of it.
 *
 * `changes` maps a column to its new type and the SQL expression of its new value (over the old column).
 */
export const rebuildTable = (
  db: Database,
  table: string,
  changes: ReadonlyMap<string, { readonly type: string; readonly value: string }>,
) => {
  const columns = db.prepare(`PRAGMA table_info(${quote(table)})`).all() as ColumnInfo[];
  const options = db
    .prepare('SELECT strict, wr FROM pragma_table_list WHERE name = ? AND schema = ?')
    .get(table, 'main') as { strict: number; wr: number };
  const dependents = db
    .prepare("SELECT sql FROM sqlite_schema WHERE tbl_name = ? AND type IN ('index', 'trigger') AND sql IS NOT NULL")
    .pluck()
    .all(table) as string[];
  const keys = columns.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk);
  const definitions = columns.map((c) =>
    [
      quote(c.name),
      changes.get(c.name)?.type ?? c.type,
      ...(keys.length === 1 && c.pk ? ['PRIMARY KEY'] : []),
      ...(c.notnull ? ['NOT NULL'] : []),
      ...(c.dflt_value !== null ? [`DEFAULT ${c.dflt_value}`] : []),
    ].join(' '),
  );
  if (keys.length > 1) definitions.push(`PRIMARY KEY (${keys.map((c) => quote(c.name)).join(', ')})`);
  const tableOptions = [...(options.strict ? ['STRICT'] : []), ...(options.wr ? ['WITHOUT ROWID'] : [])];
  const next = `${table}__ninefold_rebuild`;
  const names = columns.map((c) => quote(c.name)).join(', ');
  const values = columns.map((c) => changes.get(c.name)?.value ?? quote(c.name)).join(', ');
  db.exec(`CREATE TABLE ${quote(next)} (${definitions.join(', ')}) ${tableOptions.join(', ')}`);
  db.exec(`INSERT INTO ${quote(next)} (${names}) SELECT ${values} FROM ${quote(table)}`);
  db.exec(`DROP TABLE ${quote(table)}`);
  db.exec(`ALTER TABLE ${quote(next)} RENAME TO ${quote(table)}`);
  for (const sql of dependents) db.exec(sql);
};
