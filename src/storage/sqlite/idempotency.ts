import type { Database } from 'better-sqlite3';
import type { IdempotencyStore, StoredResponse } from '../store.ts';
import { sqliteDialect } from './sqlite-dialect.ts';

/** A claim not completed yet: its status is 0 until its transaction saves the answer. */
const RUNNING = 0;

/**
 * Stored responses of requests that carried an Idempotency-Key, keyed by (caller, key). A claim is a row with
 * status 0 written in the request's transaction: the requests of one group-commit batch share the connection, so a
 * second one sees the first's claim (`running`); another process waits for the batch to commit (SQLite has one
 * writer) and then sees its answer, or nothing if it rolled back.
 */
export const sqliteIdempotency = (db: Database): IdempotencyStore => {
  db.exec(`CREATE TABLE IF NOT EXISTS _ninefold_idempotency (
    caller TEXT NOT NULL, key TEXT NOT NULL, fingerprint TEXT NOT NULL, status INTEGER NOT NULL,
    headers TEXT NOT NULL, body TEXT NOT NULL, created_at TEXT NOT NULL, PRIMARY KEY (caller, key)) STRICT;
    CREATE INDEX IF NOT EXISTS _ninefold_idempotency_created ON _ninefold_idempotency (created_at)`);
  const find = db.prepare(
    'SELECT fingerprint, status, headers, body FROM _ninefold_idempotency WHERE caller = ? AND key = ?',
  );
  const claim = db.prepare(
    `INSERT INTO _ninefold_idempotency (caller, key, fingerprint, status, headers, body, created_at) VALUES (?, ?, '', ${RUNNING}, '{}', '', ?)`,
  );
  const complete = db.prepare(
    'UPDATE _ninefold_idempotency SET fingerprint = ?, status = ?, headers = ?, body = ? WHERE caller = ? AND key = ?',
  );
  const purge = db.prepare(
    `DELETE FROM _ninefold_idempotency WHERE rowid IN (SELECT rowid FROM _ninefold_idempotency WHERE created_at < ? ORDER BY created_at LIMIT ${sqliteDialect.limitMarker})`,
  );
  return {
    async claim(caller, key, now) {
      const row = find.get(caller, key) as (Omit<StoredResponse, 'headers'> & { headers: string }) | undefined;
      if (!row) {
        claim.run(caller, key, now.toISOString());
        return { state: 'new' };
      }
      if (row.status === RUNNING) return { state: 'running' };
      return { state: 'saved', response: { ...row, headers: JSON.parse(row.headers) } };
    },
    async complete(caller, key, r) {
      complete.run(r.fingerprint, r.status, JSON.stringify(r.headers), r.body, caller, key);
    },
    async purgeBefore(cutoff, limit) {
      return purge.run(cutoff.toISOString(), limit).changes;
    },
  };
};
