import type { IdempotencyStore, StoredResponse } from '../store.ts';
import type { PgPool } from './pg-pool.ts';

/** A claim not completed yet: its status is 0 until its transaction saves the answer. */
const RUNNING = 0;

/**
 * Idempotency records, keyed by (caller, key), claimed inside the request's transaction. A transaction-level advisory
 * lock on the key's hash tells at once when another transaction, on any instance, holds the key (`running`); the
 * claim row itself is an INSERT … ON CONFLICT DO NOTHING, so two claims can never both be new, and a claim rolled
 * back leaves nothing behind.
 */
export const postgresIdempotency = (db: PgPool): IdempotencyStore => ({
  async claim(caller, key, now) {
    const [claimed] = await db.rows<{ locked: boolean; inserted: boolean }>(
      `WITH lock AS (SELECT pg_try_advisory_xact_lock(hashtextextended($1 || chr(31) || $2, 0)) AS locked),
       ins AS (INSERT INTO _ninefold_idempotency (caller, key, fingerprint, status, headers, body, created_at)
         SELECT $1, $2, '', ${RUNNING}, '{}', '', $3 FROM lock WHERE locked
         ON CONFLICT DO NOTHING RETURNING 1)
       SELECT (SELECT locked FROM lock) AS locked, EXISTS (SELECT 1 FROM ins) AS inserted`,
      [caller, key, now.toISOString()],
    );
    if (claimed?.inserted) return { state: 'new' };
    if (!claimed?.locked) return { state: 'running' };
    const [row] = await db.rows<Omit<StoredResponse, 'headers'> & { headers: string }>(
      'SELECT fingerprint, status, headers, body FROM _ninefold_idempotency WHERE caller = $1 AND key = $2',
      [caller, key],
    );
    if (!row || row.status === RUNNING) return { state: 'running' };
    return { state: 'saved', response: { ...row, headers: JSON.parse(row.headers) } };
  },
  complete(caller, key, r) {
    // Held, sent with COMMIT (pg-pool.ts write): the answer is saved in the same round trip as the commit.
    return db.write(
      'UPDATE _ninefold_idempotency SET fingerprint = $1, status = $2, headers = $3, body = $4 WHERE caller = $5 AND key = $6',
      [r.fingerprint, r.status, JSON.stringify(r.headers), r.body, caller, key],
    );
  },
  async purgeBefore(cutoff, limit) {
    const result = await db.result(
      `DELETE FROM _ninefold_idempotency WHERE (caller, key) IN (
         SELECT caller, key FROM _ninefold_idempotency WHERE created_at < $1 ORDER BY created_at LIMIT $2)`,
      [cutoff.toISOString(), limit],
    );
    return result.rowCount ?? 0;
  },
});
