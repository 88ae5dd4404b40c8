import { eventId, parseEventId } from '../event-ids.ts';
import type { EventLog, NewEvent, StoredEvent } from '../store.ts';
import { createEventSequencer } from './event-sequencer.ts';
import type { PgPool } from './pg-pool.ts';

interface EventRow {
  seq: number;
  type: string;
  time: string;
  resource: string | null;
  record_id: string | null;
  data: string;
}

const toEvent = (r: EventRow): StoredEvent => ({
  seq: r.seq,
  id: eventId(r.seq, Date.parse(r.time)),
  type: r.type,
  time: r.time,
  ...(r.resource !== null ? { resource: r.resource } : {}),
  ...(r.record_id !== null ? { recordId: r.record_id } : {}),
  data: JSON.parse(r.data) as Record<string, unknown>,
});

const SEQUENCE = 'SELECT _ninefold_sequence_events()';
const COLUMNS = 'seq, type, time, resource, record_id, data';
const INSERT = 'INSERT INTO _ninefold_events (type, time, resource, record_id, data) VALUES ($1, $2, $3, $4, $5)';

/**
 * The outbox. A sequence number taken at insert would not be commit order: a transaction that takes 41 and commits
 * after the one that took 42 would be skipped by every reader that already read 42. So an event is inserted with no
 * seq, and once its transaction has committed the sequencer (system-tables.ts) numbers every committed event that has
 * none, one run at a time, each run after all the seqs given before: seq order is the order events became readable.
 * Readers read numbered events only, after a run that started after their call (event-sequencer.ts), which also
 * numbers the events of a process that died between its COMMIT and its run.
 */
export const postgresEventLog = (db: PgPool, told: () => void): EventLog => {
  const sequencer = createEventSequencer(
    () => db.rows(SEQUENCE),
    (fn) => db.detached(fn),
  );
  // This process's readers are told once per committed transaction, not per event, and only once it has committed.
  const committed = () => {
    sequencer.committed();
    told();
  };
  return {
    append(e: NewEvent) {
      const written = db.write(INSERT, [
        e.type,
        e.time,
        e.resource ?? null,
        e.recordId ?? null,
        e.dataJson ?? JSON.stringify(e.data ?? {}),
      ]);
      // In a transaction the row is held until COMMIT, and the run is asked for once the transaction has committed.
      return db.onCommit(committed) ? written : written.then(committed);
    },
    async after(afterSeq, limit, types = []) {
      await sequencer.numbered();
      const filter = types.length ? ' AND type = ANY($3::text[])' : '';
      const rows = await db.rows<EventRow>(
        `SELECT ${COLUMNS} FROM _ninefold_events WHERE seq > $1${filter} ORDER BY seq LIMIT $2`,
        types.length ? [afterSeq, limit, types] : [afterSeq, limit],
      );
      return rows.map(toEvent);
    },
    async lastSeq() {
      await sequencer.numbered();
      const [row] = await db.rows<{ seq: number }>('SELECT coalesce(max(seq), 0)::bigint AS seq FROM _ninefold_events');
      return row?.seq ?? 0;
    },
    async get(id) {
      const named = parseEventId(id);
      if (!named) return undefined;
      await sequencer.numbered();
      const [row] = await db.rows<EventRow>(`SELECT ${COLUMNS} FROM _ninefold_events WHERE seq = $1`, [named.seq]);
      return row && Date.parse(row.time) === named.timeMs ? toEvent(row) : undefined;
    },
  };
};
