import type { CounterStore, CounterWindow } from '../store.ts';
import type { PgPool } from './pg-pool.ts';

/** Fixed-window counters shared by every instance: one upsert per hit, atomic under concurrent hits. */
export const postgresCounters = (db: PgPool): CounterStore => ({
  async hit(key, now, windowMs) {
    const at = now.getTime();
    const [row] = await db.rows<CounterWindow>(
      `INSERT INTO _ninefold_counters AS c (key, count, reset_at) VALUES ($1, 1, $2)
       ON CONFLICT (key) DO UPDATE SET
         count = CASE WHEN c.reset_at <= $3 THEN 1 ELSE c.count + 1 END,
         reset_at = CASE WHEN c.reset_at <= $3 THEN excluded.reset_at ELSE c.reset_at END
       RETURNING count, reset_at AS "resetAt"`,
      [key, at + windowMs, at],
    );
    return row as CounterWindow;
  },
  async peek(key, now) {
    const [row] = await db.rows<CounterWindow>(
      'SELECT count, reset_at AS "resetAt" FROM _ninefold_counters WHERE key = $1 AND reset_at > $2',
      [key, now.getTime()],
    );
    return row;
  },
  async reset(key) {
    await db.result('DELETE FROM _ninefold_counters WHERE key = $1', [key]);
  },
  async purgeBefore(now, limit) {
    const result = await db.result(
      'DELETE FROM _ninefold_counters WHERE key IN (SELECT key FROM _ninefold_counters WHERE reset_at <= $1 LIMIT $2)',
      [now.getTime(), limit],
    );
    return result.rowCount ?? 0;
  },
});
