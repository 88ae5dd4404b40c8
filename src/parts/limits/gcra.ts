/**
 * GCRA (the generic cell rate algorithm): each key keeps one number, its theoretical arrival time (TAT). A policy of
 * `limit` per `windowMs` lets a request through every windowMs / limit, with a burst of up to `limit` at once: a
 * request at `now` passes when TAT + interval − window ≤ now, and moves TAT to max(TAT, now) + interval. It is exact
 * (no window edge where twice the limit passes), costs one read and one write per key, and its state expires by
 * itself once TAT is in the past.
 */
export interface Cell {
  /** The bucket: a policy and the caller it counts. */
  readonly key: string;
  readonly limit: number;
  readonly windowMs: number;
}

/** Where a caller stands in one policy after the request, as the RateLimit field says it. */
export interface CellState {
  /** Requests that would pass right now (`r`). */
  readonly remaining: number;
  /** Milliseconds until the whole quota is back (`t`). */
  readonly resetMs: number;
}

export interface Verdict {
  readonly allowed: boolean;
  /** One per cell, in order. */
  readonly cells: readonly CellState[];
  /** When refused: milliseconds until the request would pass (every cell at once). */
  readonly retryAfterMs: number;
  /** When refused: the cells that refused it. */
  readonly violated: readonly number[];
}

/** The cells a request let through violated: none, one array for all. */
const NONE: readonly number[] = Object.freeze([]);

/**
 * Decides a request over every cell at once: it passes only when every cell lets it, and then takes from all of them
 * (a request refused by one policy costs nothing in the others). `tats` are the stored TATs (undefined: none);
 * `next` the TATs to store when allowed.
 */
export const decide = (
  cells: readonly Cell[],
  tats: ReadonlyArray<number | undefined>,
  now: number,
): Verdict & { readonly next: readonly number[] } => {
  // Plain loops and arrays sized once: this runs for every request of every limited route.
  const n = cells.length;
  const next: number[] = new Array(n);
  let violated: number[] | undefined;
  let retryAfterMs = 0;
  for (let i = 0; i < n; i++) {
    const cell = cells[i] as Cell;
    const interval = cell.windowMs / cell.limit;
    const tat = Math.max(tats[i] ?? now, now);
    const allowAt = tat + interval - cell.windowMs;
    if (allowAt > now) {
      violated ??= [];
      violated.push(i);
      retryAfterMs = Math.max(retryAfterMs, allowAt - now);
    }
    next[i] = tat + interval;
  }
  const allowed = violated === undefined;
  const states: CellState[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const cell = cells[i] as Cell;
    const interval = cell.windowMs / cell.limit;
    const tat = allowed ? (next[i] as number) : Math.max(tats[i] ?? now, now);
    states[i] = {
      remaining: Math.max(0, Math.min(cell.limit, Math.floor((now + cell.windowMs - tat) / interval + 1e-9))),
      resetMs: Math.max(0, tat - now),
    };
  }
  return { allowed, cells: states, retryAfterMs, violated: violated ?? NONE, next };
};
