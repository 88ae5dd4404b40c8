import { AsyncResource } from 'node:async_hooks';

/**
 * Gathers items and saves them in batches, one batch at a time: the items added in one turn of the event loop go
 * together, and so do the ones added while a batch is being saved (under load a batch grows to what arrived during
 * the save before it). `add` resolves once its batch was saved, or failed: `save` reports its own errors.
 */
export const createBatches = <T>(save: (items: T[]) => Promise<void>) => {
  // Saved in the async context the batches were made in, not in that of whoever added first (who may be inside a
  // store transaction that has ended: a save run there would join it).
  const scope = new AsyncResource('ninefold-batches');
  let pending: Array<{ readonly item: T; readonly done: () => void }> = [];
  let running = false;
  const run = async () => {
    while (pending.length) {
      const batch = pending;
      pending = [];
      try {
        await save(batch.map((b) => b.item));
      } catch {
        // save reports its failures; the items' callers carry on either way.
      } finally {
        for (const b of batch) b.done();
      }
    }
    running = false;
  };
  return {
    add(item: T): Promise<void> {
      return new Promise((done) => {
        pending.push({ item, done });
        if (running) return;
        running = true;
        scope.runInAsyncScope(() => setImmediate(() => void run()));
      });
    },
  };
};
