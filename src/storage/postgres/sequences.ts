import type { SequenceStore } from '../store.ts';
import type { PgPool } from './pg-pool.ts';

/**
 * Named sequences as rows, not PostgreSQL sequences: the upsert locks the row until the transaction ends, so two
 * creates take 1 and 2 in commit order, and a rolled-back create gives its number back (no gaps).
 */
export const postgresSequences = (db: PgPool): SequenceStore => ({
  async next(name) {
    const [row] = await db.rows<{ value: number }>(
      `INSERT INTO _ninefold_sequences AS s (name, value) VALUES ($1, 1)
       ON CONFLICT (name) DO UPDATE SET value = s.value + 1 RETURNING value`,
      [name],
    );
    return Number(row?.value ?? 1);
  },
});
