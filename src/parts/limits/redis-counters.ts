import { type Cell, decide, type Verdict } from './gcra.ts';
import type { RateCounters } from './rate-counters.ts';
import type { CounterConnection } from './redis-connection.ts';

/**
 * GCRA over every cell of a request in one round trip: reads each TAT, lets the request through only when every
 * cell does, and then stores each new TAT with a time-to-live of its distance from now (a key outlives its use by
 * nothing). Returns the TATs it read; the caller works out the same verdict from them (gcra.ts). ARGV: now, then
 * limit and window (ms) per key. The server's clock is the one that counts, so instances should keep theirs in step.
 */
const GCRA = `
local now = tonumber(ARGV[1])
local read = {}
local allowed = true
for i = 1, #KEYS do
  local limit = tonumber(ARGV[2 * i])
  local window = tonumber(ARGV[2 * i + 1])
  local stored = redis.call('GET', KEYS[i])
  read[i] = stored or ''
  local tat = tonumber(stored) or now
  if tat < now then tat = now end
  if tat + window / limit - window > now then allowed = false end
end
if allowed then
  for i = 1, #KEYS do
    local limit = tonumber(ARGV[2 * i])
    local window = tonumber(ARGV[2 * i + 1])
    local tat = tonumber(read[i]) or now
    if tat < now then tat = now end
    local next = tat + window / limit
    redis.call('SET', KEYS[i], string.format('%.3f', next), 'PX', math.max(1, math.ceil(next - now)))
  end
end
return read
`;

interface GcraCommand {
  nfGcra(keyCount: number, ...args: Array<string | number>): Promise<string[]>;
}

/** Rate counters in Redis: every instance with the same Redis and prefix counts together. */
export const redisCounters = (connection: CounterConnection): RateCounters => {
  const { redis, prefix } = connection;
  redis.defineCommand('nfGcra', { lua: GCRA });
  const gcra = redis as unknown as GcraCommand;
  return {
    shared: true,
    async take(cells: readonly Cell[], now: number): Promise<Verdict> {
      const args: Array<string | number> = cells.map((c) => `${prefix}rl:${c.key}`);
      args.push(now);
      for (const c of cells) args.push(c.limit, c.windowMs);
      const read = await connection.run(() => gcra.nfGcra(cells.length, ...args));
      return decide(
        cells,
        read.map((t) => (t === '' ? undefined : Number(t))),
        now,
      );
    },
    close: () => connection.close(),
  };
};
