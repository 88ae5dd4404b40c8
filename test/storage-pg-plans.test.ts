import { afterAll, describe, expect, it } from 'vitest';
import { PgPool } from '../src/storage/postgres/pg-pool.ts';
import { postgresDialect } from '../src/storage/postgres/postgres-dialect.ts';
import { PostgresStore } from '../src/storage/postgres/postgres-store.ts';
import { buildListSql } from '../src/storage/sql/list-sql.ts';
import type { ListQuery } from '../src/storage/store.ts';
import { dropSchemas, freshPgUrl } from './helpers/postgres.ts';
import { planOfSpec } from './storage/plan.ts';

const plan = planOfSpec(`
ninefold: 1
service: { name: plans }
resources:
  Note:
    fields: { title: { type: string, required: true }, rank: { type: integer } }
`);
const note = plan.resourcesByName.get('Note');

const closers: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const close of closers) await close();
  await dropSchemas();
});

const page = (limit: number, filters: ListQuery['filters'] = []): ListQuery => ({
  filters,
  sort: [{ field: 'createdAt', desc: false }],
  limit,
  count: false,
});

describe('a list page on PostgreSQL keeps one plan', () => {
  it('writes the page size into the statement, so from the sixth run on it keeps a generic plan and skips planning', async () => {
    if (!note) throw new Error('no Note');
    const url = freshPgUrl();
    const store = new PostgresStore({ url });
    closers.push(async () => void (await store.close()));
    await store.migrate(plan);
    // Enough rows that a LIMIT PostgreSQL cannot see (a tenth of the table, it guesses) looks dearer than 21.
    const pool = new PgPool({ url });
    closers.push(() => pool.end());
    await pool.rows(
      `INSERT INTO note (id, created_at, updated_at, revision, title, rank)
       SELECT lpad(i::text, 26, '0'), '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', 1, 'note ' || i, i % 3
       FROM generate_series(1, 3000) AS i`,
    );
    await pool.rows('ANALYZE note');
    const query = page(21, [{ field: 'rank', op: 'eq', value: 1 }]);
    const sql = buildListSql(postgresDialect, note, query);
    expect(sql.select).toMatch(/LIMIT 21$/);
    expect(sql.params(query)).toEqual([1]);

    // One connection answers every read here when they come one at a time (the idle lane).
    for (let run = 0; run < 8; run++) expect(await pool.read(sql.select, sql.params(query))).toHaveLength(21);
    const [prepared] = await pool.read<{ generic_plans: number; custom_plans: number }>(
      'SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement = $1',
      [sql.select],
    );
    // With `LIMIT $2` PostgreSQL planned every run anew: 8 custom plans, no generic one.
    expect(prepared?.generic_plans).toBeGreaterThanOrEqual(3);
  });

  it('a page size that is not a whole number never reaches the text', () => {
    if (!note) throw new Error('no Note');
    expect(() => buildListSql(postgresDialect, note, page(Number.NaN))).toThrow(TypeError);
    expect(() => buildListSql(postgresDialect, note, { ...page(1), limit: '1; DROP TABLE x' as never })).toThrow(
      TypeError,
    );
  });

  it('pages of different sizes are different statements, each with its own rows', async () => {
    const url = freshPgUrl();
    const store = new PostgresStore({ url });
    closers.push(async () => void (await store.close()));
    await store.migrate(plan);
    const at = '2026-01-01T00:00:00.000Z';
    for (let i = 0; i < 5; i++)
      await store.insert('Note', {
        id: `01K${String(i).padStart(23, '0')}`,
        createdAt: at,
        updatedAt: at,
        revision: 1,
        title: `note ${i}`,
        rank: i,
      });
    expect((await store.list('Note', page(2))).rows.map((r) => r.rank)).toEqual([0, 1]);
    expect((await store.list('Note', page(4))).rows.map((r) => r.rank)).toEqual([0, 1, 2, 3]);
    expect((await store.list('Note', page(2))).rows.map((r) => r.rank)).toEqual([0, 1]);
  });

  it('past 2,000 statement texts a new one is still answered, sent unnamed: no connection keeps a plan for every text', async () => {
    const pool = new PgPool({ url: freshPgUrl() });
    closers.push(() => pool.end());
    const answers: unknown[] = [];
    for (let k = 0; k < 2050; k++) {
      const [row] = await pool.read<{ n: number }>(`SELECT $1::int + ${k} AS n`, [1]);
      answers.push(row?.n);
    }
    expect(answers.at(-1)).toBe(2050);
    const [kept] = await pool.read<{ n: number }>('SELECT count(*)::int AS n FROM pg_prepared_statements', []);
    expect(kept?.n).toBeLessThanOrEqual(2001);
    expect(kept?.n).toBeGreaterThan(1000);
  });
});
