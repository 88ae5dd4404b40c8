import pg from 'pg';
import { StoreError } from '../store.ts';

/**
 * SQLSTATE classes and codes (https://www.postgresql.org/docs/current/errcodes-appendix.html) by what they mean to a
 * caller. A serialization failure, a deadlock, a lock or statement time-out: busy (retry shortly). A connection that
 * failed, a server shutting down or out of resources: unavailable. The store's own tables or schema gone:
 * unavailable, and the store counts itself lost.
 */
const BUSY = new Set(['40001', '40P01', '55P03', '57014']);
const UNAVAILABLE_CLASSES = new Set(['08', '53', '57', '58', 'XX']);
export const LOST = new Set(['42P01', '3F000', '3D000']);

/** What node-postgres throws, not the server, when a connection cannot be used. */
const CONNECTION_MESSAGES =
  /Connection terminated|not queryable|after calling end on the pool|timeout exceeded when trying to connect|timeout expired|Client was closed/;

export interface ErrorContext {
  /** The fields a unique index guards, from the index's name. */
  uniqueFields(constraint: string): readonly string[];
}

/** The StoreError an error thrown by the driver means, or the error itself (a bug). */
export const storeErrorOf = (error: unknown, context: ErrorContext): unknown => {
  if (error instanceof StoreError) return error;
  if (error instanceof pg.DatabaseError) {
    const code = error.code ?? '';
    if (code === '23505') {
      const fields = context.uniqueFields(error.constraint ?? '');
      return new StoreError('unique', `${fields.join(', ')} must be unique`, fields[0], { cause: error, fields });
    }
    if (BUSY.has(code)) return new StoreError('busy', `the database is busy (${code})`, undefined, { cause: error });
    if (LOST.has(code) || UNAVAILABLE_CLASSES.has(code.slice(0, 2))) {
      return new StoreError('unavailable', `storage is unavailable (${code})`, undefined, { cause: error });
    }
    return error;
  }
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    if ((typeof code === 'string' && /^E[A-Z]+$/.test(code)) || CONNECTION_MESSAGES.test(error.message)) {
      return new StoreError('unavailable', `storage is unavailable (${code ?? 'connection'})`, undefined, {
        cause: error,
      });
    }
  }
  return error;
};

/** Whether the error says the store's schema or tables are gone (dropped under it). */
export const isLost = (error: unknown): boolean => error instanceof pg.DatabaseError && LOST.has(error.code ?? '');
