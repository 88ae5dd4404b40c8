import { PostgresStore } from './postgres/postgres-store.ts';
import { SqliteStore } from './sqlite/sqlite-store.ts';
import type { Store } from './store.ts';

export interface OpenStoreOptions {
  /** SQLite only: NORMAL survives a crash of the process, FULL also a crash of the machine. */
  readonly synchronous?: 'NORMAL' | 'FULL';
}

/** Whether a --db value names a PostgreSQL database rather than a SQLite file. */
export const isPostgresUrl = (target: string): boolean => /^postgres(ql)?:\/\//i.test(target);

/**
 * The store a --db value names: `postgres://…` (or `postgresql://…`, with an optional `schema` query parameter) is a
 * PostgreSQL database, anything else the path of a SQLite file.
 */
export const openStore = (target: string, options: OpenStoreOptions = {}): Store =>
  isPostgresUrl(target)
    ? new PostgresStore({ url: target })
    : new SqliteStore({ path: target, ...(options.synchronous ? { synchronous: options.synchronous } : {}) });
