import type { Database } from 'better-sqlite3';
import type { CounterStore, CounterWindow } from '../store.ts';
import { sqliteDialect } from './sqlite-dialect.ts';

/** Fixed-window counters in the database file: every process on the file counts together (one writer). */
export const sqliteCounters = (db: Database): CounterStore => {
  db.exec(`CREATE TABLE IF NOT EXISTS _ninefold_counters (
    key TEXT PRIMARY KEY, count INTEGER NOT NULL, reset_at INTEGER NOT NULL) STRICT`);
  // RETURNING read with .all(): through .get() the statement would stay open and starve the WAL checkpoint.
  const hit = db.prepare(`INSERT INTO _ninefold_counters (key, count, reset_at) VALUES (?, 1, ?)
    ON CONFLICT (key) DO UPDATE SET
      count = CASE WHEN reset_at <= ? THEN 1 ELSE count + 1 END,
      reset_at = CASE WHEN reset_at <= ? THEN excluded.reset_at ELSE reset_at END
    RETURNING count, reset_at AS resetAt`);
  const peek = db.prepare('SELECT count, reset_at AS resetAt FROM _ninefold_counters WHERE key = ? AND reset_at > ?');
  const purge = db.prepare(
    `DELETE FROM _ninefold_counters WHERE key IN (SELECT key FROM _ninefold_counters WHERE reset_at <= ? LIMIT ${sqliteDialect.limitMarker})`,
  );
  const reset = db.prepare('DELETE FROM _ninefold_counters WHERE key = ?');
  return {
    async reset(key) {
      reset.run(key);
    },
    async hit(key, now, windowMs) {
      const at = now.getTime();
      return (hit.all(key, at + windowMs, at, at) as CounterWindow[])[0] as CounterWindow;
    },
    async peek(key, now) {
      return (peek.all(key, now.getTime()) as CounterWindow[])[0];
    },
    async purgeBefore(now, limit) {
      return purge.run(now.getTime(), limit).changes;
    },
  };
};
