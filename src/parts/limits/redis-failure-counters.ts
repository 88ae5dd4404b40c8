import type { CounterStore, CounterWindow } from '../../storage/index.ts';
import type { CounterConnection } from './redis-connection.ts';

/**
 * One hit of a fixed window, in one round trip: a window that ended (by the caller's clock) starts again at 1; the
 * key lives until its window ends. ARGV: now, window (ms). Returns the count and the window's end.
 */
const HIT = `
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local stored = redis.call('HMGET', KEYS[1], 'c', 'r')
local count = tonumber(stored[1]) or 0
local reset = tonumber(stored[2])
if not reset or reset <= now then
  count = 0
  reset = now + window
end
count = count + 1
redis.call('HSET', KEYS[1], 'c', count, 'r', reset)
redis.call('PEXPIRE', KEYS[1], math.max(1, reset - now))
return {count, tostring(reset)}
`;

interface HitCommand {
  nfHit(keyCount: number, key: string, now: number, windowMs: number): Promise<[number, string]>;
}

/**
 * Fixed-window counters (the failed-login limiter's) in Redis, shared by every instance and kept off the database;
 * while Redis fails they fall back to the database's counters (`fallback`), so the limiter never stops counting.
 */
export const redisWindowCounters = (connection: CounterConnection, fallback: CounterStore): CounterStore => {
  const { redis, prefix } = connection;
  redis.defineCommand('nfHit', { lua: HIT });
  const hit = redis as unknown as HitCommand;
  const key = (k: string) => `${prefix}w:${k}`;
  return {
    async hit(k, now, windowMs) {
      try {
        const [count, reset] = await connection.run(() => hit.nfHit(1, key(k), now.getTime(), windowMs));
        return { count: Number(count), resetAt: Number(reset) };
      } catch {
        return fallback.hit(k, now, windowMs);
      }
    },
    async peek(k, now) {
      try {
        const [count, reset] = await connection.run(() => redis.hmget(key(k), 'c', 'r'));
        const window: CounterWindow | undefined =
          count && reset && Number(reset) > now.getTime()
            ? { count: Number(count), resetAt: Number(reset) }
            : undefined;
        return window;
      } catch {
        return fallback.peek(k, now);
      }
    },
    // Redis keys expire by themselves; windows counted in the database while Redis was away are purged there.
    purgeBefore: (now, limit) => fallback.purgeBefore(now, limit),
    async reset(k) {
      await connection.run(() => redis.del(key(k))).catch(() => undefined);
      await fallback.reset(k);
    },
  };
};
