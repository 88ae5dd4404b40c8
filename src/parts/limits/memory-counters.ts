import { type Cell, decide, type Verdict } from './gcra.ts';
import type { RateCounters } from './rate-counters.ts';

/** How many decisions between two sweeps of the TATs already in the past (the same as no entry at all). */
const SWEEP_EVERY = 10_000;

/** Rate counters in this process: exact for one process; each instance counts on its own (docs/limits.md). */
export const memoryCounters = (): RateCounters => {
  const tats = new Map<string, number>();
  const stored: Array<number | undefined> = [];
  let decisions = 0;
  return {
    shared: false,
    take(cells: readonly Cell[], now: number): Verdict {
      // Read by decide() only, within this call: one array for every decision.
      for (let i = 0; i < cells.length; i++) stored[i] = tats.get((cells[i] as Cell).key);
      const verdict = decide(cells, stored, now);
      if (verdict.allowed)
        for (let i = 0; i < cells.length; i++) tats.set((cells[i] as Cell).key, verdict.next[i] as number);
      if (++decisions % SWEEP_EVERY === 0) for (const [key, tat] of tats) if (tat <= now) tats.delete(key);
      return verdict;
    },
    async close() {},
  };
};
