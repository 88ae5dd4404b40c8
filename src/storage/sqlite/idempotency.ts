import type { Database } from 'better-sqlite3';
import type { IdempotencyStore, StoredResponse } from '../store.ts';

/** Stored responses of requests that carried an Idempotency-Key, keyed by (caller, key). */
export const sqliteIdempotency = (db: Database): IdempotencyStore => {
  db.exec(`CREATE TABLE IF NOT EXISTS _ninefold_idempotency (
    caller TEXT NOT NULL, key TEXT NOT NULL, fingerprint TEXT NOT NULL, status INTEGER NOT NULL,
    headers TEXT NOT NULL, body TEXT NOT NULL, created_at TEXT NOT NULL, PRIMARY KEY (caller, key)) STRICT;
    CREATE INDEX IF NOT EXISTS _ninefold_idempotency_created ON _ninefold_idempotency (created_at)`);
  const find = db.prepare(
    'SELECT fingerprint, status, headers, body FROM _ninefold_idempotency WHERE caller = ? AND key = ?',
  );
  const save = db.prepare(
    'INSERT OR IGNORE INTO _ninefold_idempotency (caller, key, fingerprint, status, headers, body, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const purge = db.prepare(
    'DELETE FROM _ninefold_idempotency WHERE rowid IN (SELECT rowid FROM _ninefold_idempotency WHERE created_at < ? ORDER BY created_at LIMIT ?)',
  );
  return {
    async find(caller, key) {
      const row = find.get(caller, key) as (Omit<StoredResponse, 'headers'> & { headers: string }) | undefined;
      return row ? { ...row, headers: JSON.parse(row.headers) } : undefined;
    },
    async save(caller, key, r, now) {
      save.run(caller, key, r.fingerprint, r.status, JSON.stringify(r.headers), r.body, now.toISOString());
    },
    async purgeBefore(cutoff, limit) {
      return purge.run(cutoff.toISOString(), limit).changes;
    },
  };
};
