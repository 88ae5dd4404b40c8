import { eventId, parseEventId } from '../event-ids.ts';
import type { EventLog, NewEvent, StoredEvent } from '../store.ts';
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
const ignore = () => undefined;
/** The background sequencer starts at most one run per this many ms (a stream on another instance waits up to it). */
const PACE_MS = 20;
const COLUMNS = 'seq, type, time, resource, record_id, data';

/**
 * The outbox. A sequence number taken at insert would not be commit order: a transaction that takes 41 and commits
 * after the one that took 42 would be skipped by every reader that already read 42. So an event is inserted with no
 * seq, and once its transaction has committed the sequencer (system-tables.ts) numbers every committed event that has
 * none, one run at a time, each run after all the seqs given before: seq order is the order events became readable.
 * Readers read numbered events only, and run the sequencer first, which also numbers the events of a process that
 * died between its COMMIT and its sequencer run.
 */
export const postgresEventLog = (db: PgPool): EventLog & { sequence(): Promise<void> } => {
  const sequence = async () => {
    await db.rows(SEQUENCE);
  };
  // A committed writer does not wait for the sequencer (its own transaction and WAL flush, serialised on a lock): it
  // starts a run in the background, and writers that commit while one is under way or waiting share the next, which
  // starts after their commit. Runs start at most one per PACE_MS: under load one run numbers the events of many
  // requests (a run costs PostgreSQL about 0.4 ms besides some 20 µs per event it numbers, bench/RESULTS.md), and a
  // lone write is numbered at once.
  // Its NOTIFY wakes the readers of every instance (this one's too), which run the sequencer again before reading: no
  // reader misses a committed event, whether or not the background run got to it (the process may die first).
  let running = false;
  let waiting: NodeJS.Timeout | undefined;
  let again = false;
  let lastStart = Number.NEGATIVE_INFINITY;
  const run = () => {
    waiting = undefined;
    running = true;
    again = false;
    lastStart = performance.now();
    sequence()
      .catch(ignore)
      .finally(() => {
        running = false;
        if (again) kick();
      });
  };
  const kick = () => {
    if (running) again = true;
    if (running || waiting) return;
    const wait = lastStart + PACE_MS - performance.now();
    if (wait <= 0) db.detached(run);
    else {
      waiting = db.detached(() => setTimeout(run, wait));
      waiting.unref();
    }
  };
  const sequenceAfterCommit = async () => kick();
  return {
    sequence,
    async append(e: NewEvent) {
      await db.write(
        'INSERT INTO _ninefold_events (type, time, resource, record_id, data) VALUES ($1, $2, $3, $4, $5)',
        [e.type, e.time, e.resource ?? null, e.recordId ?? null, e.dataJson ?? JSON.stringify(e.data ?? {})],
      );
      await db.afterCommit(sequenceAfterCommit);
    },
    async after(afterSeq, limit, types = []) {
      await sequence();
      const filter = types.length ? ' AND type = ANY($3::text[])' : '';
      const rows = await db.rows<EventRow>(
        `SELECT ${COLUMNS} FROM _ninefold_events WHERE seq > $1${filter} ORDER BY seq LIMIT $2`,
        types.length ? [afterSeq, limit, types] : [afterSeq, limit],
      );
      return rows.map(toEvent);
    },
    async lastSeq() {
      await sequence();
      const [row] = await db.rows<{ seq: number }>('SELECT coalesce(max(seq), 0)::bigint AS seq FROM _ninefold_events');
      return row?.seq ?? 0;
    },
    async get(id) {
      const named = parseEventId(id);
      if (!named) return undefined;
      await sequence();
      const [row] = await db.rows<EventRow>(`SELECT ${COLUMNS} FROM _ninefold_events WHERE seq = $1`, [named.seq]);
      return row && Date.parse(row.time) === named.timeMs ? toEvent(row) : undefined;
    },
  };
};
