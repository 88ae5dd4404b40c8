import Database from 'better-sqlite3';
import { StoreError } from '../store.ts';

/**
 * SQLite's primary result codes (https://sqlite.org/rescode.html) by what they mean to a caller; an extended code
 * (SQLITE_IOERR_WRITE, SQLITE_READONLY_DBMOVED, SQLITE_BUSY_SNAPSHOT, …) means what its primary code means.
 * Storage that cannot be read or written, whatever the cause (a full disk, an I/O error, a read-only or corrupt
 * file, no memory): unavailable, a 503 with Retry-After. Another writer holding the lock: busy. Anything else
 * (a SQL error, a constraint the runtime should have checked first) is a bug and stays what it is.
 */
const KIND_OF_PRIMARY: Readonly<Record<string, 'busy' | 'unavailable'>> = {
  SQLITE_BUSY: 'busy',
  SQLITE_LOCKED: 'busy',
  SQLITE_FULL: 'unavailable',
  SQLITE_IOERR: 'unavailable',
  SQLITE_READONLY: 'unavailable',
  SQLITE_CANTOPEN: 'unavailable',
  SQLITE_CORRUPT: 'unavailable',
  SQLITE_NOTADB: 'unavailable',
  SQLITE_NOMEM: 'unavailable',
  SQLITE_PROTOCOL: 'unavailable',
  SQLITE_NOLFS: 'unavailable',
  SQLITE_PERM: 'unavailable',
};

const UNIQUE = new Set(['SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_CONSTRAINT_PRIMARYKEY']);

const MESSAGES = {
  busy: 'the database is busy',
  unavailable: 'storage is unavailable',
} as const;

/** SQLITE_IOERR_WRITE → SQLITE_IOERR: primary codes are one word. */
const primaryOf = (code: string) => code.split('_', 2).join('_');

/**
 * The StoreError an error thrown by SQLite means, or the error itself when it is not SQLite's (or means a bug).
 * `uniqueField` names the field of a broken unique constraint from SQLite's message ("…: table.column"); `isOpen`
 * tells whether the connection is still open.
 */
export const storeErrorOf = (
  error: unknown,
  context: { isOpen(): boolean; uniqueField(table: string, column: string): string },
): unknown => {
  if (error instanceof StoreError) return error;
  if (error instanceof Database.SqliteError) {
    if (UNIQUE.has(error.code)) {
      // "UNIQUE constraint failed: favorite.article, favorite.user": every column of the key.
      const columns = [...error.message.matchAll(/(?:: |, )([^.\s,]+)\.(\w+)/g)];
      const fields = columns.length ? columns.map(([, t = '', c = '']) => context.uniqueField(t, c)) : ['id'];
      return new StoreError('unique', `${fields.join(', ')} must be unique`, fields[0], { cause: error, fields });
    }
    const kind = KIND_OF_PRIMARY[primaryOf(error.code)];
    if (kind) return new StoreError(kind, `${MESSAGES[kind]} (${error.code})`, undefined, { cause: error });
    return error;
  }
  // better-sqlite3 refuses any use of a closed connection with a TypeError.
  if (error instanceof TypeError && !context.isOpen()) {
    return new StoreError('unavailable', 'the store is closed', undefined, { cause: error });
  }
  return error;
};

/** Methods of the Store contract that answer synchronously (an event appended inside a transaction, a key generation). */
const SYNCHRONOUS: ReadonlySet<string> = new Set(['append', 'generation']);

/**
 * Wraps the named methods of a part of the store so that what they throw goes through `translate`, and so that
 * `admit` may refuse a call before it runs (the database file is lost). An asynchronous method only ever rejects,
 * refusals included: callers chain `.catch()` on it.
 */
export const translatingErrors = <T extends object>(
  part: T,
  methods: ReadonlyArray<keyof T & string>,
  translate: (error: unknown) => unknown,
  admit: () => void,
): T => {
  const target = part as Record<string, unknown>;
  const rethrow = (error: unknown) => {
    throw translate(error);
  };
  for (const name of methods) {
    const method = target[name] as (...args: unknown[]) => unknown;
    const synchronous = SYNCHRONOUS.has(name);
    target[name] = (...args: unknown[]) => {
      let result: unknown;
      try {
        admit();
        result = method.apply(part, args);
      } catch (error) {
        if (synchronous) throw translate(error);
        return Promise.reject(translate(error));
      }
      return result instanceof Promise ? result.then(undefined, rethrow) : result;
    };
  }
  return part;
};

/** Every method of a part built as an object of functions, but `close`: closing is never refused. */
export const methodsOf = <T extends object>(part: T): Array<keyof T & string> =>
  Object.keys(part).filter((k) => k !== 'close' && typeof (part as Record<string, unknown>)[k] === 'function') as Array<
    keyof T & string
  >;
