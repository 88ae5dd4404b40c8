import { afterAll, describe, expect, it } from 'vitest';
import { PgPool } from '../src/storage/postgres/pg-pool.ts';
import { dropSchemas, freshPgUrl } from './helpers/postgres.ts';

const pools: PgPool[] = [];
const open = () => {
  const pool = new PgPool({ url: freshPgUrl() });
  pools.push(pool);
  return pool;
};

afterAll(async () => {
  for (const pool of pools) await pool.end();
  await dropSchemas();
});

describe('PgPool reads on the shared lanes (pipelined)', () => {
  it('many at once each get their own answer', async () => {
    const pool = open();
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) => pool.read<{ n: number }>('SELECT $1::int AS n', [i])),
    );
    expect(answers.map(([row]) => row?.n)).toEqual(Array.from({ length: 200 }, (_, i) => i));
  });

  it('one that fails fails alone: the reads sent with it, before and after, are answered', async () => {
    const pool = open();
    const reads = Array.from({ length: 20 }, (_, i) =>
      pool.read<{ n: number }>('SELECT 10 / $1::int AS n', [i === 7 ? 0 : 1]).then(
        ([row]) => row?.n,
        (error: { code?: string }) => error.code,
      ),
    );
    const answers = await Promise.all(reads);
    expect(answers[7]).toBe('22012');
    expect(answers.filter((a) => a === 10)).toHaveLength(19);
  });

  it('in a transaction a read goes to its client and sees its uncommitted write', async () => {
    const pool = open();
    const seen = await pool.transaction(async () => {
      await pool.rows('CREATE TEMP TABLE t (n int) ON COMMIT DROP');
      await pool.rows('INSERT INTO t VALUES ($1)', [5]);
      return pool.read<{ n: number }>('SELECT n FROM t WHERE n = $1', [5]);
    });
    expect(seen).toEqual([{ n: 5 }]);
  });

  it('after end(), a read fails instead of opening a lane again', async () => {
    const pool = new PgPool({ url: freshPgUrl() });
    await pool.read('SELECT $1::int AS n', [1]);
    await pool.end();
    await expect(pool.read('SELECT $1::int AS n', [1])).rejects.toThrow();
  });
});
