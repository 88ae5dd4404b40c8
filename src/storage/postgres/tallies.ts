import type pg from 'pg';

type Client = Pick<pg.PoolClient, 'query'>;

import type { Plan } from '../../plan/types.ts';
import { quote } from '../sql/dialect.ts';
import { talliesOf } from '../sql/tallies.ts';

/**
 * Creates the columns, trigger functions and triggers that keep tallies (counts kept by the database), backfills a
 * new one, and drops the triggers of tallies the spec no longer has. Runs under the migration lock; a tally whose
 * trigger and column are there is left alone.
 */
export const migratePostgresTallies = async (client: Client, plan: Plan): Promise<void> => {
  const wanted = talliesOf(plan, 'postgres');
  const existing = (
    await client.query(
      `SELECT t.tgname AS name, c.relname AS "table" FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND t.tgname LIKE 'nf\\_tally\\_%'`,
    )
  ).rows as Array<{ name: string; table: string }>;
  const names = new Set(wanted.map((t) => t.column));
  for (const e of existing) {
    if (names.has(e.name)) continue;
    await client.query(`DROP TRIGGER IF EXISTS ${quote(e.name)} ON ${quote(e.table)}`);
    await client.query(`DROP FUNCTION IF EXISTS ${quote(e.name)}()`);
  }
  for (const t of wanted) {
    const hasColumn =
      (
        await client.query(
          'SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 AND column_name = $2',
          [t.table, t.column],
        )
      ).rowCount === 1;
    if (hasColumn && existing.some((e) => e.name === t.column && e.table === t.from)) continue;
    const [name, table, column, from] = [quote(t.column), quote(t.table), quote(t.column), quote(t.from)];
    if (!hasColumn) await client.query(`ALTER TABLE ${table} ADD COLUMN ${column} bigint NOT NULL DEFAULT 0`);
    const bump = (row: 'NEW' | 'OLD', by: '+ 1' | '- 1') =>
      `IF ${t.counts(row)} THEN UPDATE ${table} SET ${column} = ${column} ${by} WHERE id = ${t.viaAsId(row)}; END IF;`;
    const unchanged = [
      ...t.watched.map((c) => `OLD.${quote(c)} IS NOT DISTINCT FROM NEW.${quote(c)}`),
      `(${t.counts('OLD')}) IS NOT DISTINCT FROM (${t.counts('NEW')})`,
    ].join(' AND ');
    await client.query(
      `CREATE OR REPLACE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
         IF TG_OP = 'UPDATE' AND ${unchanged} THEN RETURN NULL; END IF;
         IF TG_OP <> 'INSERT' THEN ${bump('OLD', '- 1')} END IF;
         IF TG_OP <> 'DELETE' THEN ${bump('NEW', '+ 1')} END IF;
         RETURN NULL;
       END $$`,
    );
    await client.query(`DROP TRIGGER IF EXISTS ${name} ON ${from}`);
    await client.query(
      `CREATE TRIGGER ${name} AFTER INSERT OR DELETE OR UPDATE OF ${t.watched.map(quote).join(', ')} ON ${from} ` +
        `FOR EACH ROW EXECUTE FUNCTION ${name}()`,
    );
    await client.query(t.backfill);
  }
};
