import Database from 'better-sqlite3';

/** How long a BEGIN waits for the write lock while locked out, and a readiness probe always. */
const BRIEF_WAIT_MS = 200;

const isBusy = (error: unknown) => error instanceof Database.SqliteError && error.code.startsWith('SQLITE_BUSY');

/**
 * SQLite's write lock, taken by BEGIN IMMEDIATE. SQLite waits for it up to the busy timeout, and the wait blocks the
 * event loop (better-sqlite3 is synchronous). Once a wait has run out, another connection holds the lock for long (a
 * process in a long write transaction, an exclusive lock): further BEGINs wait only briefly, so that writes answer
 * 503 `busy` at once rather than stalling every request for the whole timeout, until one gets the lock again.
 */
export class WriteLock {
  readonly #db: Database.Database;
  readonly #begin: Database.Statement;
  readonly #timeoutMs: number;
  #lockedOut = false;

  constructor(db: Database.Database) {
    this.#db = db;
    this.#begin = db.prepare('BEGIN IMMEDIATE');
    this.#timeoutMs = Number(db.pragma('busy_timeout', { simple: true }));
  }

  /** BEGIN IMMEDIATE; `brief` waits for the lock only briefly, whatever happened before (a readiness probe). */
  begin(brief = false): void {
    const short = brief || this.#lockedOut;
    if (short) this.#db.pragma(`busy_timeout = ${Math.min(BRIEF_WAIT_MS, this.#timeoutMs)}`);
    try {
      this.#begin.run();
      this.#lockedOut = false;
    } catch (error) {
      if (isBusy(error)) this.#lockedOut = true;
      throw error;
    } finally {
      if (short) this.#db.pragma(`busy_timeout = ${this.#timeoutMs}`);
    }
  }
}
