import type { HistoryEntry, StateLog, Timer } from '../store.ts';
import type { PgPool } from './pg-pool.ts';

/** Transition history and durable timers; due timers are leased with FOR UPDATE SKIP LOCKED across instances. */
export const postgresStateLog = (db: PgPool): StateLog => ({
  // Not async: held in a transaction, the write answers at once (see PgPool.write).
  append(resource, recordId, e) {
    return db.write(
      'INSERT INTO _ninefold_history (resource, record_id, transition, from_state, to_state, at, input, actor) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)',
      [resource, recordId, e.transition, e.from, e.to, e.at, JSON.stringify(e.input ?? null), e.actor],
    );
  },
  async history(resource, recordId) {
    const rows = await db.rows<HistoryEntry & { input: string }>(
      'SELECT transition, from_state AS "from", to_state AS "to", at, input, actor FROM _ninefold_history WHERE resource = $1 AND record_id = $2 ORDER BY seq',
      [resource, recordId],
    );
    return rows.map((r) => ({ ...r, input: JSON.parse(r.input) }));
  },
  async schedule(t) {
    await db.rows(
      'INSERT INTO _ninefold_timers (resource, record_id, transition, from_state, due_at) VALUES ($1, $2, $3, $4, $5)',
      [t.resource, t.recordId, t.transition, t.fromState, t.dueAt],
    );
  },
  async cancel(resource, recordId) {
    await db.rows('DELETE FROM _ninefold_timers WHERE resource = $1 AND record_id = $2', [resource, recordId]);
  },
  async claimDue(now, owner, leaseMs, limit) {
    const at = now.toISOString();
    return db.rows<Timer>(
      `UPDATE _ninefold_timers SET owner = $1, lease_until = $2
       WHERE id IN (SELECT id FROM _ninefold_timers WHERE due_at <= $3 AND (lease_until IS NULL OR lease_until < $3)
                    ORDER BY due_at LIMIT $4 FOR UPDATE SKIP LOCKED)
       RETURNING id, resource, record_id AS "recordId", transition, from_state AS "fromState", due_at AS "dueAt"`,
      [owner, new Date(now.getTime() + leaseMs).toISOString(), at, limit],
    );
  },
  async finish(id) {
    await db.rows('DELETE FROM _ninefold_timers WHERE id = $1', [id]);
  },
  async nextDue() {
    const [row] = await db.rows<{ due: string | null }>('SELECT min(due_at) AS due FROM _ninefold_timers');
    return row?.due ? new Date(row.due) : undefined;
  },
});
