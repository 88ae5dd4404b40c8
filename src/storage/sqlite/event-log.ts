import Database from 'better-sqlite3';
import { eventId, parseEventId } from '../event-ids.ts';
import type { EventLog, NewEvent, StoredEvent } from '../store.ts';
import type { BatchTail, GroupCommit } from './group-commit.ts';
import { sqliteDialect } from './sqlite-dialect.ts';

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

const TABLE = `CREATE TABLE IF NOT EXISTS _ninefold_events (
    seq INTEGER PRIMARY KEY, type TEXT NOT NULL, time TEXT NOT NULL,
    resource TEXT, record_id TEXT, data TEXT NOT NULL) STRICT`;

/** Outboxes written before ids were derived from seq kept an id column with its own index: copied over once. */
const upgrade = (db: Database.Database) => {
  const columns = db.prepare("SELECT name FROM pragma_table_info('_ninefold_events')").pluck().all() as string[];
  if (!columns.includes('id')) return;
  db.transaction(() => {
    db.exec('ALTER TABLE _ninefold_events RENAME TO _ninefold_events_old');
    db.exec(TABLE);
    db.exec(`INSERT INTO _ninefold_events (seq, type, time, resource, record_id, data)
      SELECT seq, type, time, resource, record_id, data FROM _ninefold_events_old ORDER BY seq`);
    db.exec('DROP TABLE _ninefold_events_old');
  })();
};

const COLUMNS = 5;
const CHUNKS = [32, 16, 8, 4, 2, 1];

/**
 * Events appended while a group-commit batch runs are staged, not inserted: the rows a batch keeps are written
 * just before its COMMIT in a few multi-row INSERTs (chunks of 32, 16, … 1 rows), and the rows of a caller
 * that rolls back are forgotten, never written. Same outcome as inserting each one inside its savepoint, for
 * fewer statement runs. Rows beyond `kept` belong to the caller running now (callers run one at a time).
 */
const stagedInserts = (db: Database.Database): BatchTail & { stage(params: unknown[]): void } => {
  const statements = new Map(
    CHUNKS.map((rows) => [
      rows,
      db.prepare(
        `INSERT INTO _ninefold_events (type, time, resource, record_id, data) VALUES ${Array.from({ length: rows }, () => '(?, ?, ?, ?, ?)').join(', ')}`,
      ),
    ]),
  );
  let params: unknown[] = [];
  let kept = 0;
  return {
    stage(row) {
      for (const value of row) params.push(value);
    },
    keep() {
      kept = params.length;
    },
    drop() {
      params.length = kept;
    },
    write() {
      const total = kept / COLUMNS;
      let at = 0;
      for (const rows of CHUNKS) {
        const insert = statements.get(rows) as Database.Statement;
        for (; total - at >= rows; at += rows) insert.run(params.slice(at * COLUMNS, (at + rows) * COLUMNS));
      }
    },
    clear() {
      params = [];
      kept = 0;
    },
  };
};

const rowOf = (e: NewEvent): unknown[] => [
  e.type,
  e.time,
  e.resource ?? null,
  e.recordId ?? null,
  e.dataJson ?? JSON.stringify(e.data ?? {}),
];

/**
 * The outbox: `seq` is the rowid and the event's id is derived from it (event-ids.ts), so an event costs one
 * b-tree insert. Events are never deleted from the top, so seq only grows, in commit order (SQLite has one
 * writer). Events are inserted on the writing connection, inside the transaction of their change, and read
 * on a second, read-only connection, which sees committed transactions only (a group-commit batch that is
 * still open, or one that rolls back, is never read).
 */
export const sqliteEventLog = (
  db: Database.Database,
  path: string,
  group: GroupCommit,
): EventLog & { close(): void } => {
  upgrade(db);
  db.exec(TABLE);
  const staged = stagedInserts(db);
  group.addTail(staged);
  let reader: Database.Database | undefined;
  const read = () => {
    reader ??= new Database(path, { readonly: true, fileMustExist: true });
    return reader;
  };
  const statements = new Map<number, Database.Statement>();
  const afterStatement = (types: number) => {
    let st = statements.get(types);
    if (!st) {
      const filter = types ? ` AND type IN (${Array.from({ length: types }, () => '?').join(', ')})` : '';
      st = read().prepare(
        `SELECT * FROM _ninefold_events WHERE seq > ?${filter} ORDER BY seq LIMIT ${sqliteDialect.limitMarker}`,
      );
      if (statements.size < 64) statements.set(types, st);
    }
    return st;
  };
  let bySeq: Database.Statement | undefined;
  let last: Database.Statement | undefined;
  return {
    append(e) {
      if (group.inTransaction) staged.stage(rowOf(e));
      // Alone: its own savepoint in the open batch (or a new one), so no other caller's rollback takes it along.
      else
        return group.run(async () => {
          staged.stage(rowOf(e));
        });
    },
    async after(afterSeq, limit, types = []) {
      return (afterStatement(types.length).all(afterSeq, ...types, limit) as EventRow[]).map(toEvent);
    },
    close() {
      reader?.close();
      reader = undefined;
      bySeq = undefined;
      last = undefined;
      statements.clear();
    },
    async lastSeq() {
      last ??= read().prepare('SELECT coalesce(max(seq), 0) FROM _ninefold_events').pluck();
      return last.get() as number;
    },
    async get(id) {
      const named = parseEventId(id);
      if (!named) return undefined;
      bySeq ??= read().prepare('SELECT * FROM _ninefold_events WHERE seq = ?');
      const row = bySeq.get(named.seq) as EventRow | undefined;
      return row && Date.parse(row.time) === named.timeMs ? toEvent(row) : undefined;
    },
  };
};
