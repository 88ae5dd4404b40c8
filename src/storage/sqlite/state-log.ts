import type { Database } from 'better-sqlite3';
import type { HistoryEntry, StateLog, Timer } from '../store.ts';
import { sqliteDialect } from './sqlite-dialect.ts';

/** Transition history and durable timers, in the same database file as the records. */
export const sqliteStateLog = (db: Database): StateLog => {
  db.exec(`CREATE TABLE IF NOT EXISTS _ninefold_history (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, resource TEXT NOT NULL, record_id TEXT NOT NULL, transition TEXT NOT NULL,
    from_state TEXT NOT NULL, to_state TEXT NOT NULL, at TEXT NOT NULL, input TEXT NOT NULL, actor TEXT NOT NULL) STRICT;
  CREATE INDEX IF NOT EXISTS _ninefold_history__record ON _ninefold_history (resource, record_id, seq);
  CREATE TABLE IF NOT EXISTS _ninefold_timers (
    id INTEGER PRIMARY KEY AUTOINCREMENT, resource TEXT NOT NULL, record_id TEXT NOT NULL, transition TEXT NOT NULL,
    from_state TEXT NOT NULL, due_at TEXT NOT NULL, owner TEXT, lease_until TEXT) STRICT;
  CREATE INDEX IF NOT EXISTS _ninefold_timers__due ON _ninefold_timers (due_at);
  CREATE INDEX IF NOT EXISTS _ninefold_timers__record ON _ninefold_timers (resource, record_id);`);
  const append = db.prepare(
    'INSERT INTO _ninefold_history (resource, record_id, transition, from_state, to_state, at, input, actor) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const history = db.prepare(
    'SELECT transition, from_state AS "from", to_state AS "to", at, input, actor FROM _ninefold_history WHERE resource = ? AND record_id = ? ORDER BY seq',
  );
  const schedule = db.prepare(
    'INSERT INTO _ninefold_timers (resource, record_id, transition, from_state, due_at) VALUES (?, ?, ?, ?, ?)',
  );
  const cancel = db.prepare('DELETE FROM _ninefold_timers WHERE resource = ? AND record_id = ?');
  // One statement: SQLite's single writer makes the lease atomic across processes sharing the file.
  const claim = db.prepare(`UPDATE _ninefold_timers SET owner = ?, lease_until = ?
    WHERE id IN (SELECT id FROM _ninefold_timers WHERE due_at <= ? AND (lease_until IS NULL OR lease_until < ?) ORDER BY due_at LIMIT ${sqliteDialect.limitMarker})
    RETURNING id, resource, record_id AS recordId, transition, from_state AS fromState, due_at AS dueAt`);
  const finish = db.prepare('DELETE FROM _ninefold_timers WHERE id = ?');
  const nextDue = db.prepare('SELECT min(due_at) AS due FROM _ninefold_timers');
  return {
    async append(resource, recordId, e) {
      append.run(resource, recordId, e.transition, e.from, e.to, e.at, JSON.stringify(e.input ?? null), e.actor);
    },
    async history(resource, recordId) {
      return (history.all(resource, recordId) as Array<HistoryEntry & { input: string }>).map((r) => ({
        ...r,
        input: JSON.parse(r.input),
      }));
    },
    async schedule(t) {
      schedule.run(t.resource, t.recordId, t.transition, t.fromState, t.dueAt);
    },
    async cancel(resource, recordId) {
      cancel.run(resource, recordId);
    },
    async claimDue(now, owner, leaseMs, limit) {
      const at = now.toISOString();
      return claim.all(owner, new Date(now.getTime() + leaseMs).toISOString(), at, at, limit) as Timer[];
    },
    async finish(id) {
      finish.run(id);
    },
    async nextDue() {
      const row = nextDue.get() as { due: string | null };
      return row.due ? new Date(row.due) : undefined;
    },
  };
};
