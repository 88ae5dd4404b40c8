import type { Cell, Verdict } from './gcra.ts';

/** Where rate-limit state lives: in this process, or in Redis shared by every instance. */
export interface RateCounters {
  /** True when every instance counts together. */
  readonly shared: boolean;
  /**
   * Decides one request over its cells and takes from them when it passes (atomically across instances when
   * shared). Throws when the counters cannot be reached; the caller applies `onStoreFailure`.
   */
  take(cells: readonly Cell[], now: number): Verdict | Promise<Verdict>;
  /** Ends the connection, if any. */
  close(): Promise<void>;
}
