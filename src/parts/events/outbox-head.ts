import type { RuntimeContext } from '../../runtime/context.ts';
import type { WorkerHealth } from '../../runtime/workers.ts';

/** How often the newest seq is looked at, once for all streams. */
const HEAD_POLL_MS = 100;

/**
 * Watches the outbox's newest seq for every open stream at once (one cheap query per 100 ms while any
 * stream is open), so an idle stream costs no query of its own.
 */
export const createOutboxHead = (ctx: RuntimeContext, health: WorkerHealth) => {
  const listeners = new Set<(head: number) => void>();
  let timer: NodeJS.Timeout | undefined;
  let unsubscribe: (() => void) | undefined;
  let head = 0;
  // One look at a time: writes told of while one is under way share the next (under load the store tells of every
  // turn of the event loop that appended, and each look is a query).
  let looking = false;
  let again = false;
  const poll = async () => {
    if (looking) {
      again = true;
      return;
    }
    looking = true;
    do {
      again = false;
      try {
        const now = await ctx.store.events.lastSeq();
        health.ok();
        if (now > head) {
          head = now;
          for (const listener of listeners) listener(head);
        }
      } catch (error) {
        // The next poll looks again; meanwhile the failure is logged and shown in /readyz.
        health.failed(error, 'reading the newest event');
      }
    } while (again && listeners.size > 0);
    looking = false;
  };
  return {
    subscribe(listener: (head: number) => void) {
      listeners.add(listener);
      if (!timer) {
        timer = setInterval(() => void poll(), HEAD_POLL_MS);
        timer.unref();
        // Events the store tells of are looked for at once; the poll catches what it cannot tell (another process).
        unsubscribe = ctx.store.signals.subscribe('events', () => void poll());
      }
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0 && timer) {
          clearInterval(timer);
          timer = undefined;
          unsubscribe?.();
        }
      };
    },
    stop() {
      listeners.clear();
      if (timer) clearInterval(timer);
      timer = undefined;
      unsubscribe?.();
    },
  };
};
