import { type Cell, decide, type Verdict } from './gcra.ts';
import type { RateCounters } from './rate-counters.ts';

/** How many decisions between two sweeps of the TATs already in the past (the same as no entry at all). */
const SWEEP_EVERY = 10_000;

/** Rate counters in this process: exact for one process; each instance counts on its own (docs/limits.md). */
export const memoryCounters = (): RateCounters => {
  // Each key's TAT in a box of its own, updated in place: a request below its limits looks its key up once.
  const tats = new Map<string, { tat: number }>();
  const stored: Array<number | undefined> = [];
  const boxes: Array<{ tat: number } | undefined> = [];
  let decisions = 0;
  return {
    shared: false,
    take(cells: readonly Cell[], now: number): Verdict {
      // Read by decide() only, within this call: one array for every decision.
      for (let i = 0; i < cells.length; i++) {
        const box = tats.get((cells[i] as Cell).key);
        boxes[i] = box;
        stored[i] = box?.tat;
      }
      const verdict = decide(cells, stored, now);
      if (verdict.allowed)
        for (let i = 0; i < cells.length; i++) {
          const tat = verdict.next[i] as number;
          const box = boxes[i];
          if (box !== undefined) box.tat = tat;
          else tats.set((cells[i] as Cell).key, { tat });
        }
      if (++decisions % SWEEP_EVERY === 0) for (const [key, box] of tats) if (box.tat <= now) tats.delete(key);
      return verdict;
    },
    async close() {},
  };
};
