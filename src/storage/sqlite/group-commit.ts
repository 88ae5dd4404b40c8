import { AsyncLocalStorage } from 'node:async_hooks';
import type { Database } from 'better-sqlite3';
import { StoreError } from '../store.ts';
import { WriteLock } from './write-lock.ts';

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

/** The file commits land in (database-file.ts): whether a commit may run, and whether it landed where it will be found. */
export interface CommitTarget {
  /** Throws when the file is known lost (no I/O). */
  admit(): void;
  /** Throws when the path no longer names the file opened. */
  verify(): void;
}

const ended = () =>
  new StoreError('unavailable', 'the batch transaction ended before its commit (SQLite rolled it back on an error)');

/**
 * Write transactions with group commit. Each caller's work runs alone, in its own SAVEPOINT, one after
 * the other (SQLite has one writer); the savepoints opened within one turn of the event loop share a
 * single SQLite transaction, committed once when the turn ends. A caller's promise settles only after
 * that COMMIT, so an answer is never sent for a write that is not durable (nor for one committed to a database file
 * that was deleted or replaced meanwhile: the target is verified after each COMMIT); a caller that fails rolls back
 * its own savepoint and nothing else. The price: until the COMMIT (the same turn of the event loop), reads
 * on this connection already see the batch's writes.
 */
export class GroupCommit {
  readonly #db: Database;
  readonly #context = new AsyncLocalStorage<true>();
  readonly #statements;
  readonly #lock: WriteLock;
  /** The last commit failed for want of storage (a full disk); a commit since, or a probe's, clears it. */
  #storageFailed = false;
  #queue: Promise<unknown> = Promise.resolve();
  #batch: Batch | undefined;
  #running = 0;
  #flushScheduled = false;
  readonly #tails: BatchTail[] = [];

  readonly #target: CommitTarget | undefined;

  constructor(
    db: Database,
    private readonly onCommitError: (error: unknown) => unknown,
    target?: CommitTarget,
  ) {
    this.#db = db;
    this.#target = target;
    this.#lock = new WriteLock(db);
    this.#statements = {
      commit: db.prepare('COMMIT'),
      rollback: db.prepare('ROLLBACK'),
      savepoint: db.prepare('SAVEPOINT nf_tx'),
      release: db.prepare('RELEASE nf_tx'),
      rollbackTo: db.prepare('ROLLBACK TO nf_tx'),
      tryOpen: db.prepare('SAVEPOINT nf_try'),
      tryRelease: db.prepare('RELEASE nf_try'),
      tryRollback: db.prepare('ROLLBACK TO nf_try'),
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
          this.#lock.begin();
        } catch (error) {
          throw this.onCommitError(error);
        }
        this.#batch = { waiters: [] };
      } else if (!this.#db.inTransaction) {
        // A SAVEPOINT now would open a transaction of its own, and its RELEASE would commit it alone.
        throw ended();
      }
      const batch = this.#batch;
      this.#running++;
      let opened = false;
      try {
        s.savepoint.run();
        opened = true;
        const result = await this.#context.run(true, fn);
        s.release.run();
        for (const tail of this.#tails) tail.keep();
        const committed = new Promise<void>((resolve, reject) => batch.waiters.push({ resolve, reject }));
        return { result, committed };
      } catch (error) {
        for (const tail of this.#tails) tail.drop();
        if (opened && this.#db.inTransaction) {
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

  /**
   * Runs `fn` inside the running caller's savepoint under one of its own, undone alone when `fn` throws. Callers
   * run one at a time, so nothing of another caller lands inside it. Outside a caller's work, `fn` runs as it is.
   */
  async savepoint<T>(fn: () => Promise<T>): Promise<T> {
    if (!this.inTransaction || !this.#db.inTransaction) return fn();
    const s = this.#statements;
    s.tryOpen.run();
    let result: T;
    try {
      result = await fn();
    } catch (error) {
      if (this.#db.inTransaction) {
        s.tryRollback.run();
        s.tryRelease.run();
      }
      throw error;
    }
    s.tryRelease.run();
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
    // On Node 20 an enabled AsyncLocalStorage runs a hook for every promise the process makes, reads outside any
    // transaction included: off once no caller is mid-work (the next caller's `run` turns it on again). Work a
    // finished caller left running is outside its transaction either way.
    if (this.#running === 0) this.#context.disable();
    const batch = this.#batch;
    if (!batch) return;
    this.#batch = undefined;
    try {
      if (batch.waiters.length === 0) this.#statements.rollback.run();
      else {
        // SQLite may have ended the transaction on its own (a full disk): the tails must not write outside it.
        if (!this.#db.inTransaction) throw ended();
        this.#target?.admit();
        for (const tail of this.#tails) tail.write();
        this.#statements.commit.run();
        this.#storageFailed = false;
        this.#target?.verify();
      }
    } catch (error) {
      this.#rollback();
      const mapped = this.onCommitError(error);
      this.#storageFailed ||= mapped instanceof StoreError && mapped.kind === 'unavailable';
      for (const w of batch.waiters) w.reject(mapped);
      return;
    } finally {
      for (const tail of this.#tails) tail.clear();
    }
    for (const w of batch.waiters) w.resolve();
  }

  /**
   * Whether writes go through now, for readiness; throws what a write would meet. Takes the write lock, waiting
   * only briefly, and lets it go. After a commit failed for want of storage, it commits a real write (the header's
   * user_version, rewritten unchanged): its success is the recovery. A batch open now holds the lock: nothing to do.
   */
  probe(): void {
    if (this.#batch || this.#db.inTransaction) return;
    try {
      this.#lock.begin(true);
    } catch (error) {
      throw this.onCommitError(error);
    }
    try {
      if (!this.#storageFailed) {
        this.#statements.rollback.run();
        return;
      }
      this.#db.pragma(`user_version = ${Number(this.#db.pragma('user_version', { simple: true }))}`);
      this.#statements.commit.run();
      this.#storageFailed = false;
    } catch (error) {
      this.#rollback();
      throw this.onCommitError(error);
    }
  }

  /** A write made on its own, outside any batch (autocommit), is acknowledged only once its target is verified. */
  async autocommitted<T>(write: Promise<T>): Promise<T> {
    const result = await write;
    this.#target?.verify();
    return result;
  }

  #rollback() {
    if (!this.#db.inTransaction) return;
    try {
      this.#statements.rollback.run();
    } catch {
      // The error that brought us here is what the callers get; SQLite ends the transaction itself when a
      // ROLLBACK cannot run (an I/O error), and the next BEGIN says so if it did not.
    }
  }
}

/**
 * Makes the named write methods of a part of the store safe to call outside a transaction. While a batch is
 * open for other callers, such a write runs in a transaction of its own; otherwise it would land in a suspended
 * caller's savepoint and roll back with it. With no batch open it runs at once, on its own (autocommit), and
 * is verified like a batch's COMMIT.
 */
export const writesOwnTransaction = <T extends object>(
  group: GroupCommit,
  part: T,
  methods: ReadonlyArray<keyof T & string>,
): T => {
  const guarded = part as Record<string, unknown>;
  for (const name of methods) {
    const method = guarded[name] as (...args: unknown[]) => Promise<unknown>;
    guarded[name] = (...args: unknown[]) => {
      if (group.inTransaction) return method.apply(part, args);
      if (group.openToOthers) return group.run(() => method.apply(part, args));
      return group.autocommitted(method.apply(part, args));
    };
  }
  return part;
};
