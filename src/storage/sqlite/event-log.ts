import Database from 'better-sqlite3';
import type { EventLog, StoredEvent } from '../store.ts';

interface EventRow {
  seq: number;
  id: string;
  type: string;
  time: string;
  resource: string | null;
  record_id: string | null;
  data: string;
}

const toEvent = (r: EventRow): StoredEvent => ({
  seq: r.seq,
  id: r.id,
  type: r.type,
  time: r.time,
  ...(r.resource !== null ? { resource: r.resource } : {}),
  ...(r.record_id !== null ? { recordId: r.record_id } : {}),
  data: JSON.parse(r.data) as Record<string, unknown>,
});

/**
 * The outbox: `seq` is the rowid (events are never deleted from the top, so it only grows, in commit order:
 * SQLite has one writer). Events are inserted on the writing connection, inside the transaction of their change, and read
 * on a second, read-only connection, which sees committed transactions only (a group-commit batch that is still
 * open, or one that rolls back, is never read).
 */
export const sqliteEventLog = (db: Database.Database, path: string): EventLog & { close(): void } => {
  db.exec(`CREATE TABLE IF NOT EXISTS _ninefold_events (
    seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, type TEXT NOT NULL, time TEXT NOT NULL,
    resource TEXT, record_id TEXT, data TEXT NOT NULL) STRICT`);
  const insert = db.prepare(
    'INSERT INTO _ninefold_events (id, type, time, resource, record_id, data) VALUES (?, ?, ?, ?, ?, ?)',
  );
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
      st = read().prepare(`SELECT * FROM _ninefold_events WHERE seq > ?${filter} ORDER BY seq LIMIT ?`);
      if (statements.size < 64) statements.set(types, st);
    }
    return st;
  };
  return {
    async append(e) {
      insert.run(e.id, e.type, e.time, e.resource ?? null, e.recordId ?? null, e.dataJson ?? JSON.stringify(e.data));
    },
    async after(afterSeq, limit, types = []) {
      return (afterStatement(types.length).all(afterSeq, ...types, limit) as EventRow[]).map(toEvent);
    },
    close() {
      reader?.close();
      reader = undefined;
      statements.clear();
    },
    async lastSeq() {
      return (read().prepare('SELECT coalesce(max(seq), 0) AS n FROM _ninefold_events').get() as { n: number }).n;
    },
    async get(id) {
      const row = read().prepare('SELECT * FROM _ninefold_events WHERE id = ?').get(id) as EventRow | undefined;
      return row ? toEvent(row) : undefined;
    },
  };
};
