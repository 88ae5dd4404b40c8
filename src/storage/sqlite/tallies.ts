import type { Database } from 'better-sqlite3';
import type { Plan } from '../../plan/types.ts';
import { quote } from '../sql/dialect.ts';
import { talliesOf } from '../sql/tallies.ts';

const SUFFIXES = ['ins', 'del', 'upd'] as const;

/**
 * Creates the columns and triggers that keep tallies (counts kept by the database), backfills a new one, and drops
 * the triggers of tallies the spec no longer has. Runs inside the migration's transaction. A tally whose triggers
 * and column are all there is left alone: its triggers have kept it right since it was created.
 */
export const migrateSqliteTallies = (db: Database, plan: Plan): void => {
  const wanted = talliesOf(plan, 'sqlite');
  const existing = new Set(
    db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'nf\\_tally\\_%' ESCAPE '\\'")
      .pluck()
      .all() as string[],
  );
  const names = new Set(wanted.flatMap((t) => SUFFIXES.map((s) => `${t.column}_${s}`)));
  for (const name of existing) if (!names.has(name)) db.exec(`DROP TRIGGER ${quote(name)}`);
  for (const t of wanted) {
    const columns = db.prepare(`PRAGMA table_info(${quote(t.table)})`).all() as Array<{ name: string }>;
    const hasColumn = columns.some((c) => c.name === t.column);
    if (hasColumn && SUFFIXES.every((s) => existing.has(`${t.column}_${s}`))) continue;
    if (!hasColumn) db.exec(`ALTER TABLE ${quote(t.table)} ADD COLUMN ${quote(t.column)} INTEGER NOT NULL DEFAULT 0`);
    const [table, column, from] = [quote(t.table), quote(t.column), quote(t.from)];
    const bump = (row: 'NEW' | 'OLD', by: '+ 1' | '- 1') =>
      `UPDATE ${table} SET ${column} = ${column} ${by} WHERE id = ${row}.${quote(t.via)}`;
    for (const s of SUFFIXES) db.exec(`DROP TRIGGER IF EXISTS ${quote(`${t.column}_${s}`)}`);
    db.exec(
      `CREATE TRIGGER ${quote(`${t.column}_ins`)} AFTER INSERT ON ${from} WHEN ${t.counts('NEW')} BEGIN ${bump('NEW', '+ 1')}; END`,
    );
    db.exec(
      `CREATE TRIGGER ${quote(`${t.column}_del`)} AFTER DELETE ON ${from} WHEN ${t.counts('OLD')} BEGIN ${bump('OLD', '- 1')}; END`,
    );
    const moved = [
      ...t.watched.map((c) => `OLD.${quote(c)} IS NOT NEW.${quote(c)}`),
      `(${t.counts('OLD')}) IS NOT (${t.counts('NEW')})`,
    ].join(' OR ');
    db.exec(
      `CREATE TRIGGER ${quote(`${t.column}_upd`)} AFTER UPDATE OF ${t.watched.map(quote).join(', ')} ON ${from} ` +
        `WHEN ${moved} BEGIN ${bump('OLD', '- 1')} AND (${t.counts('OLD')}); ${bump('NEW', '+ 1')} AND (${t.counts('NEW')}); END`,
    );
    db.exec(t.backfill);
  }
};
