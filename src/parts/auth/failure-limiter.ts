/**
 * Counts failed logins per key (a username, a client address) in a fixed window. Stricter than any general rate
 * limit: after `max` failures the key is refused until its window ends, whatever the password. Per process.
 */
export class FailureLimiter {
  readonly #windows = new Map<string, { count: number; resetAt: number }>();

  constructor(
    private readonly max = 10,
    private readonly windowMs = 60_000,
  ) {}

  /** Seconds until `key` may try again, or 0 when it may try now. */
  blockedFor(key: string, now: number): number {
    const w = this.#windows.get(key);
    if (!w || w.resetAt <= now) return 0;
    return w.count >= this.max ? Math.ceil((w.resetAt - now) / 1000) : 0;
  }

  fail(key: string, now: number): void {
    const w = this.#windows.get(key);
    if (!w || w.resetAt <= now) {
      if (this.#windows.size > 100_000) this.#sweep(now);
      this.#windows.set(key, { count: 1, resetAt: now + this.windowMs });
    } else w.count++;
  }

  #sweep(now: number) {
    for (const [key, w] of this.#windows) if (w.resetAt <= now) this.#windows.delete(key);
  }
}
