import { type Cell, decide, type Verdict } from './gcra.ts';
import type { RateCounters } from './rate-counters.ts';
import type { CounterConnection } from './redis-connection.ts';

/**
 * GCRA for a batch of requests in one round trip, decided in order as if each were a script of its own: per request,
 * reads each cell's TAT, lets the request through only when every cell does, and then stores each new TAT with a
 * time-to-live of its distance from now (a key outlives its use by nothing). A later request of the batch reads what
 * an earlier one stored; a key the batch uses again is read once and written once, at the end, as the requests one by
 * one would have left it. Returns every TAT it read, in KEYS order; the caller works out the same verdicts from them
 * (gcra.ts). ARGV per request: its now, its cell count, then limit and window (ms) per cell. The server's clock is
 * the one that counts, so instances should keep theirs in step.
 */
const GCRA = `
local read = {}
local known = {}
local changed = {}
local order = {}
local a = 1
local k = 0
local tats = {}
while a <= #ARGV do
  local now = tonumber(ARGV[a])
  local n = tonumber(ARGV[a + 1])
  local allowed = true
  for j = 1, n do
    local key = KEYS[k + j]
    local stored = known[key]
    if stored == nil then
      stored = redis.call('GET', key) or ''
      known[key] = stored
    end
    read[k + j] = stored
    local limit = tonumber(ARGV[a + 2 * j])
    local window = tonumber(ARGV[a + 2 * j + 1])
    local tat = tonumber(stored) or now
    if tat < now then tat = now end
    tats[j] = tat
    if tat + window / limit - window > now then allowed = false end
  end
  if allowed then
    for j = 1, n do
      local key = KEYS[k + j]
      local next = tats[j] + tonumber(ARGV[a + 2 * j + 1]) / tonumber(ARGV[a + 2 * j])
      known[key] = string.format('%.3f', next)
      if changed[key] == nil then order[#order + 1] = key end
      changed[key] = math.max(1, math.ceil(next - now))
    end
  end
  k = k + n
  a = a + 2 + 2 * n
end
for _, key in ipairs(order) do
  redis.call('SET', key, known[key], 'PX', changed[key])
end
return read
`;

interface GcraCommand {
  nfGcra(keyCount: number, ...args: Array<string | number>): Promise<string[]>;
}

/** One request waiting for the batch its caller's requests of this event-loop turn go in. */
interface Waiting {
  readonly cells: readonly Cell[];
  readonly now: number;
  resolve(verdict: Verdict): void;
  reject(error: unknown): void;
}

/** At most this many requests in one script run: Redis runs a script alone, so a batch must stay short. */
const MAX_BATCH = 64;

/** The hash tag of a request's keys (`{ip:…}`): one caller's keys, which share a cluster slot. */
const callerOf = (cells: readonly Cell[]): string => {
  const key = (cells[0] as Cell).key;
  return key.slice(0, key.indexOf('}') + 1);
};

/**
 * Rate counters in Redis: every instance with the same Redis and prefix counts together. The requests of one caller
 * that arrive in the same event-loop turn share one round trip (one script run deciding them in order), so a busy
 * caller costs Redis one command per turn instead of one per request; each batch holds only one caller's keys.
 */
export const redisCounters = (connection: CounterConnection): RateCounters => {
  const { redis, prefix } = connection;
  redis.defineCommand('nfGcra', { lua: GCRA });
  const gcra = redis as unknown as GcraCommand;
  let waiting = new Map<string, Waiting[]>();
  let scheduled = false;

  const send = (batch: readonly Waiting[]) => {
    const keys: string[] = [];
    const args: number[] = [];
    for (const { cells, now } of batch) {
      args.push(now, cells.length);
      for (const c of cells) {
        keys.push(`${prefix}rl:${c.key}`);
        args.push(c.limit, c.windowMs);
      }
    }
    const fail = (error: unknown) => {
      // A request already decided keeps its verdict: a promise settles once.
      for (const w of batch) w.reject(error);
    };
    connection
      .run(() => gcra.nfGcra(keys.length, ...keys, ...args))
      .then((read) => {
        let at = 0;
        for (const { cells, now, resolve } of batch) {
          const tats: Array<number | undefined> = new Array(cells.length);
          for (let i = 0; i < cells.length; i++) {
            const t = read[at++];
            tats[i] = t === '' || t === undefined ? undefined : Number(t);
          }
          resolve(decide(cells, tats, now));
        }
      }, fail)
      .catch(fail);
  };
  const flush = () => {
    scheduled = false;
    const due = waiting;
    waiting = new Map();
    for (const queue of due.values())
      for (let from = 0; from < queue.length; from += MAX_BATCH) send(queue.slice(from, from + MAX_BATCH));
  };

  return {
    shared: true,
    take(cells: readonly Cell[], now: number): Promise<Verdict> {
      return new Promise((resolve, reject) => {
        const caller = callerOf(cells);
        const queue = waiting.get(caller);
        if (queue) queue.push({ cells, now, resolve, reject });
        else waiting.set(caller, [{ cells, now, resolve, reject }]);
        if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
    close: () => connection.close(),
  };
};
