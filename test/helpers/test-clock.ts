/**
 * A clock the test moves by hand, to give a server as its `now`. Its timer worker reads it once at the start of
 * each pass, so with no request under way `reads(2)` resolves once a whole pass has seen the time set before.
 */
export const testClock = (start = new Date()) => {
  let ms = start.getTime();
  let reads = 0;
  const waiters = new Set<{ at: number; wake: () => void }>();
  return {
    now: (): Date => {
      reads++;
      for (const w of [...waiters]) {
        if (reads < w.at) continue;
        waiters.delete(w);
        w.wake();
      }
      return new Date(ms);
    },
    /** The time, as an ISO string, `afterMs` from the start. */
    iso: (afterMs: number) => new Date(start.getTime() + afterMs).toISOString(),
    /** Moves the clock forward. */
    advance(byMs: number) {
      ms += byMs;
    },
    /** Resolves after `n` more reads of the clock. */
    reads: (n: number) =>
      new Promise<void>((wake) => {
        waiters.add({ at: reads + n, wake });
      }),
  };
};
