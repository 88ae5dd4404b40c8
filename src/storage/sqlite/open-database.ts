import Database from 'better-sqlite3';
import { StoreError } from '../store.ts';

export interface SqliteOptions {
  readonly path: string;
  /** NORMAL survives a crash of the process; FULL also a crash of the machine (one fsync per commit). */
  readonly synchronous?: 'NORMAL' | 'FULL';
  readonly busyTimeoutMs?: number;
}

/** Opens the file with the store's settings; what goes wrong is a StoreError naming the file (for the operator). */
export const openDatabase = (options: SqliteOptions): Database.Database => {
  let db: Database.Database | undefined;
  try {
    db = new Database(options.path, { timeout: options.busyTimeoutMs ?? 5000 });
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${options.synchronous ?? 'NORMAL'}`);
    db.pragma('foreign_keys = ON');
    return db;
  } catch (error) {
    db?.close();
    throw cannotOpen(options.path, error);
  }
};

export const cannotOpen = (path: string, error: unknown) =>
  new StoreError(
    'unavailable',
    `cannot open the database ${path}: ${error instanceof Error ? error.message : String(error)}`,
    undefined,
    { cause: error },
  );
