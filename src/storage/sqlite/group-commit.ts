import { AsyncLocalStorage } from 'node:async_hooks';
import type { Database } from 'better-sqlite3';

interface Batch {
  readonly waiters: Array<{ resolve: () => void; reject: (error: unknown) => void }>;
}

/**
 * Writes a part of the store holds back until the batch commits (the outbox: its rows are written together,
 * in a few multi-row INSERTs, just before COMMIT). Callers run one at a time, so whatever was staged since
 * the last keep() or drop() belongs to the caller running now.
 */
export interface BatchTail {
  /** The running caller's savepoint was released: what it staged joins the batch. */
  keep(): void;
  /** The running caller's savepoint was rolled back: what it staged is forgotten. */
  drop(): void;
  /** Inside the transaction, just before its COMMIT: write what the batch kept. */
  write(): void;
  /** The batch is over, committed or not: forget everything staged. */
  clear(): void;
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
  readonly #tails: BatchTail[] = [];

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

  addTail(tail: BatchTail) {
    this.#tails.push(tail);
  }

  /**
   * True inside a caller's work (its async context): what a tail stages there belongs to that caller. Work
   * outside any transaction that runs while a caller is suspended mid-transaction is not that caller's.
   */
  get inTransaction(): boolean {
    return this.#context.getStore() === true;
  }

  /**
   * True when a write made now, by code outside any transaction, would land in a batch that is open for other
   * callers (inside the savepoint of one that is suspended, or in a batch waiting for its COMMIT).
   */
  get openToOthers(): boolean {
    return this.#batch !== undefined && !this.inTransaction;
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
        for (const tail of this.#tails) tail.keep();
        const committed = new Promise<void>((resolve, reject) => batch.waiters.push({ resolve, reject }));
        return { result, committed };
      } catch (error) {
        for (const tail of this.#tails) tail.drop();
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
      if (batch.waiters.length === 0) this.#statements.rollback.run();
      else {
        // SQLite may have ended the transaction on its own (a full disk): the tails must not write outside it.
        if (!this.#db.inTransaction) throw new Error('the batch transaction ended before its commit');
        for (const tail of this.#tails) tail.write();
        this.#statements.commit.run();
      }
    } catch (error) {
      if (this.#db.inTransaction) this.#statements.rollback.run();
      const mapped = this.onCommitError(error);
      for (const w of batch.waiters) w.reject(mapped);
      return;
    } finally {
      for (const tail of this.#tails) tail.clear();
    }
    for (const w of batch.waiters) w.resolve();
  }
}

/**
 * Makes the named write methods of a part of the store safe to call outside a transaction. While a batch is
 * open for other callers, such a write runs in a transaction of its own; otherwise it would land in a suspended
 * caller's savepoint and roll back with it. With no batch open it runs at once, on its own (autocommit).
 */
export const writesOwnTransaction = <T extends object>(
  group: GroupCommit,
  part: T,
  methods: ReadonlyArray<keyof T & string>,
): T => {
  const guarded = part as Record<string, unknown>;
  for (const name of methods) {
    const method = guarded[name] as (...args: unknown[]) => Promise<unknown>;
    guarded[name] = (...args: unknown[]) =>
      group.openToOthers ? group.run(() => method.apply(part, args)) : method.apply(part, args);
  }
  return part;
};
