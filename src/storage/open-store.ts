import { resolve } from 'node:path';
import { SqliteStore } from './sqlite/sqlite-store.ts';
import type { Store } from './store.ts';

export interface OpenStoreOptions {
  /** SQLite only: NORMAL survives a crash of the process, FULL also a crash of the machine. */
  readonly synchronous?: 'NORMAL' | 'FULL';
  /** PostgreSQL only: connections in the pool (default 10). */
  readonly poolSize?: number;
  /** PostgreSQL only: a statement running longer is cancelled and answered 503 busy (default 10 s). */
  readonly statementTimeoutMs?: number;
}

/** Whether a --db value names a PostgreSQL database rather than a SQLite file. */
export const isPostgresUrl = (target: string): boolean => /^postgres(ql)?:\/\//i.test(target);

/** A --db value made definite: a URL as given, a file path made absolute. */
export const databaseTarget = (value: string): string => (isPostgresUrl(value) ? value : resolve(value));

/** A target as it may be shown (a log line, an error): a URL's password is left out. */
export const shownTarget = (target: string): string => {
  if (!isPostgresUrl(target)) return target;
  const url = new URL(target);
  if (url.password) url.password = '***';
  return url.toString();
};

/**
 * The store a --db value names: `postgres://…` (or `postgresql://…`, with an optional `schema` query parameter) is a
 * PostgreSQL database, anything else the path of a SQLite file.
 */
export const openStore = async (target: string, options: OpenStoreOptions = {}): Promise<Store> => {
  if (!isPostgresUrl(target)) {
    return new SqliteStore({ path: target, ...(options.synchronous ? { synchronous: options.synchronous } : {}) });
  }
  // Loaded only for a PostgreSQL URL: the driver is about 15 MB a SQLite service does not need.
  const { PostgresStore } = await import('./postgres/postgres-store.ts');
  return new PostgresStore({
    url: target,
    ...(options.poolSize !== undefined ? { poolSize: options.poolSize } : {}),
    ...(options.statementTimeoutMs !== undefined ? { statementTimeoutMs: options.statementTimeoutMs } : {}),
  });
};

/**
 * Whether a database already holds a Ninefold store (commands that only read or revoke refuse a new, empty one: it
 * would only hide a wrong path). False also when the server cannot be reached.
 */
export const storeExists = async (target: string, fileExists: (path: string) => boolean): Promise<boolean> => {
  if (!isPostgresUrl(target)) return fileExists(target);
  const { pg, parseUrl } = await import('./postgres/pg-pool.ts');
  const { connectionString, schema } = parseUrl(target);
  const client = new pg.Client({ connectionString });
  try {
    await client.connect();
    const { rows } = await client.query('SELECT to_regclass($1) IS NOT NULL AS here', [`"${schema}"._ninefold_fields`]);
    return rows[0]?.here === true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
};
