import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { StoreError } from '../store.ts';
import { storeErrorOf } from './sqlite-errors.ts';

const context = (open = true) => ({ isOpen: () => open, uniqueField: (_t: string, column: string) => `f_${column}` });
const sqlite = (code: string, message = 'x') => new Database.SqliteError(message, code);
const kindOf = (error: unknown) => (error instanceof StoreError ? error.kind : 'not a StoreError');

describe('SQLite errors as StoreErrors', () => {
  it.each([
    ['SQLITE_FULL', 'unavailable'],
    ['SQLITE_IOERR', 'unavailable'],
    ['SQLITE_IOERR_WRITE', 'unavailable'],
    ['SQLITE_IOERR_FSYNC', 'unavailable'],
    ['SQLITE_READONLY', 'unavailable'],
    ['SQLITE_READONLY_DBMOVED', 'unavailable'],
    ['SQLITE_CANTOPEN', 'unavailable'],
    ['SQLITE_CORRUPT', 'unavailable'],
    ['SQLITE_CORRUPT_INDEX', 'unavailable'],
    ['SQLITE_NOTADB', 'unavailable'],
    ['SQLITE_NOMEM', 'unavailable'],
    ['SQLITE_BUSY', 'busy'],
    ['SQLITE_BUSY_SNAPSHOT', 'busy'],
    ['SQLITE_LOCKED', 'busy'],
    ['SQLITE_LOCKED_SHAREDCACHE', 'busy'],
  ])('%s → %s, keeping the code for the log', (code, kind) => {
    const mapped = storeErrorOf(sqlite(code), context());
    expect(kindOf(mapped)).toBe(kind);
    expect((mapped as StoreError).message).toContain(code);
    expect((mapped as StoreError).cause).toBeInstanceOf(Database.SqliteError);
  });

  it('a broken unique constraint names its field', () => {
    const mapped = storeErrorOf(sqlite('SQLITE_CONSTRAINT_UNIQUE', 'UNIQUE constraint failed: item.name'), context());
    expect(kindOf(mapped)).toBe('unique');
    expect((mapped as StoreError).field).toBe('f_name');
  });

  it('anything else stays what it is: a bug', () => {
    for (const error of [sqlite('SQLITE_ERROR'), sqlite('SQLITE_CONSTRAINT_NOTNULL'), new TypeError('x')]) {
      expect(storeErrorOf(error, context())).toBe(error);
    }
  });

  it("the driver's refusal of a closed connection is unavailable; the caller's own errors stay what they are", () => {
    expect(kindOf(storeErrorOf(new TypeError('The database connection is not open'), context(false)))).toBe(
      'unavailable',
    );
    const own = new RangeError('a caller error');
    expect(storeErrorOf(own, context(false))).toBe(own);
  });
});
