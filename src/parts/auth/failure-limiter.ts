import { createHash } from 'node:crypto';
import type { CounterStore } from '../../storage/index.ts';

/** How many failures between two purges of ended windows, and how many go per purge. */
const PURGE_EVERY = 1000;
const PURGE_BATCH = 500;

/**
 * Counts failed logins per key (a username, a client address) in a fixed window. Stricter than any general rate
 * limit: after `max` failures the key is refused until its window ends, whatever the password. The counts live in
 * the store, so every process and instance on the database counts together. Keys are stored as their SHA-256: a
 * user name is the caller's text, of any length and content.
 */
export class FailureLimiter {
  #failures = 0;

  constructor(
    private readonly counters: CounterStore,
    private readonly max = 10,
    private readonly windowMs = 60_000,
  ) {}

  #key(key: string) {
    return `failed-login:${createHash('sha256').update(key).digest('base64url')}`;
  }

  /** Seconds until `key` may try again, or 0 when it may try now. */
  async blockedFor(key: string, now: number): Promise<number> {
    const w = await this.counters.peek(this.#key(key), new Date(now));
    if (!w || w.resetAt <= now) return 0;
    return w.count >= this.max ? Math.ceil((w.resetAt - now) / 1000) : 0;
  }

  async fail(key: string, now: number): Promise<void> {
    await this.counters.hit(this.#key(key), new Date(now), this.windowMs);
    if (++this.#failures % PURGE_EVERY === 0) await this.counters.purgeBefore(new Date(now), PURGE_BATCH);
  }
}
