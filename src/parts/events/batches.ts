import { AsyncResource } from 'node:async_hooks';

export interface BatchOptions {
  /** A batch this big is saved at once. */
  readonly max: number;
  /** How long the first item of a batch waits for others to join it, while more are on their way. */
  readonly waitMs: number;
  /** Whether more items are on their way: when none are, a batch is saved at once (waiting would gain nothing). */
  readonly coming: () => boolean;
}

/**
 * Gathers items and saves them in batches, one batch at a time. A batch is saved once it holds `max` items, once
 * nothing more is coming, or `waitMs` after it started; items added while a batch is being saved make the next one.
 * Each save is a transaction with its commit (on PostgreSQL a WAL flush): fewer, larger batches cost the database
 * less than many small ones. An item's `done` is called once its batch was saved, or failed: `save` reports its own
 * errors. (A callback, not a promise: the worker adds an item per delivery.)
 */
export const createBatches = <T>(save: (items: T[]) => Promise<void>, options: BatchOptions) => {
  // Saved in the async context the batches were made in, not in that of whoever added first (who may be inside a
  // store transaction that has ended: a save run there would join it).
  const scope = new AsyncResource('ninefold-batches');
  let items: T[] = [];
  let dones: Array<() => void> = [];
  let saving = false;
  let soon = false;
  let timer: NodeJS.Timeout | undefined;

  const run = async () => {
    soon = false;
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (saving || !items.length) return;
    saving = true;
    const batch = items;
    const done = dones;
    items = [];
    dones = [];
    try {
      await save(batch);
    } catch {
      // save reports its failures; the items' callers carry on either way.
    } finally {
      for (const d of done) d();
    }
    saving = false;
    schedule();
  };
  /** Decides when the items gathered so far are saved. */
  const schedule = () => {
    if (saving || soon || !items.length) return;
    if (items.length >= options.max || !options.coming()) {
      // The items added in this turn of the event loop go together.
      soon = true;
      scope.runInAsyncScope(() => setImmediate(() => void run()));
    } else timer ??= scope.runInAsyncScope(() => setTimeout(() => void run(), options.waitMs));
  };
  return {
    add(item: T, done: () => void): void {
      items.push(item);
      dones.push(done);
      schedule();
    },
  };
};
