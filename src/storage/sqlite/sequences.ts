import type { Database } from 'better-sqlite3';
import type { SequenceStore } from '../store.ts';

/** Named sequences in the database file: one writer at a time, so every number is taken once. */
export const sqliteSequences = (db: Database): SequenceStore => {
  db.exec('CREATE TABLE IF NOT EXISTS _ninefold_sequences (name TEXT PRIMARY KEY, value INTEGER NOT NULL) STRICT');
  // RETURNING read with .all(): through .get() the statement would stay open and starve the WAL checkpoint.
  const next = db.prepare(`INSERT INTO _ninefold_sequences (name, value) VALUES (?, 1)
    ON CONFLICT (name) DO UPDATE SET value = value + 1 RETURNING value`);
  return {
    async next(name) {
      return (next.all(name) as Array<{ value: number }>)[0]?.value ?? 1;
    },
  };
};
