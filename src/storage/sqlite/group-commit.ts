import { AsyncLocalStorage } from 'node:async_hooks';
import type { Database } from 'better-sqlite3';

interface Batch {
  readonly waiters: Array<{ resolve: () => void; reject: (error: unknown) => void }>;
}

/**
 * Write transactions with group commit. Each caller's work runs alone, in its own SAVEPOINT, one after
 * the other (SQLite has one writer); the savepoints opened within one turn of the event loop share a
 * single SQLite transaction, committed once when the turn ends. A caller's promise settles only after
 * that COMMIT, so an answer is never sent for a write that is not durable; a caller that fails rolls back
 * its own savepoint and nothing else. The price: until the COMMIT (the same turn of the event loop), reads
 * on this connection already see the batch's writes.
 */
export class GroupCommit {
  readonly #db: Database;
  readonly #context = new AsyncLocalStorage<true>();
  readonly #statements;
  #queue: Promise<unknown> = Promise.resolve();
  #batch: Batch | undefined;
  #running = 0;
  #flushScheduled = false;

  constructor(
    db: Database,
    private readonly onCommitError: (error: unknown) => unknown,
  ) {
    this.#db = db;
    this.#statements = {
      begin: db.prepare('BEGIN IMMEDIATE'),
      commit: db.prepare('COMMIT'),
      rollback: db.prepare('ROLLBACK'),
      savepoint: db.prepare('SAVEPOINT nf_tx'),
      release: db.prepare('RELEASE nf_tx'),
      rollbackTo: db.prepare('ROLLBACK TO nf_tx'),
    };
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    // Already inside one of our transactions (same async context): join it.
    if (this.#context.getStore()) return fn();
    const execute = async (): Promise<{ result: T; committed: Promise<void> }> => {
      const s = this.#statements;
      if (!this.#batch) {
        try {
          s.begin.run();
        } catch (error) {
          throw this.onCommitError(error);
        }
        this.#batch = { waiters: [] };
      }
      const batch = this.#batch;
      this.#running++;
      s.savepoint.run();
      try {
        const result = await this.#context.run(true, fn);
        s.release.run();
        const committed = new Promise<void>((resolve, reject) => batch.waiters.push({ resolve, reject }));
        return { result, committed };
      } catch (error) {
        if (this.#db.inTransaction) {
          s.rollbackTo.run();
          s.release.run();
        }
        throw error;
      } finally {
        this.#running--;
        this.#scheduleFlush();
      }
    };
    const step = this.#queue.then(execute, execute);
    this.#queue = step.catch(() => undefined);
    const { result, committed } = await step;
    await committed;
    return result;
  }

  /** Commits at the end of this turn of the event loop, or as soon as no caller is mid-work. */
  #scheduleFlush() {
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    setImmediate(() => {
      this.#flushScheduled = false;
      if (this.#running > 0) return; // the running caller schedules the flush when it ends
      this.flush();
    });
  }

  /** Commits the open batch now, settling every caller in it. */
  flush() {
    const batch = this.#batch;
    if (!batch) return;
    this.#batch = undefined;
    try {
      if (batch.waiters.length > 0) this.#statements.commit.run();
      else this.#statements.rollback.run();
    } catch (error) {
      if (this.#db.inTransaction) this.#statements.rollback.run();
      const mapped = this.onCommitError(error);
      for (const w of batch.waiters) w.reject(mapped);
      return;
    }
    for (const w of batch.waiters) w.resolve();
  }
}
