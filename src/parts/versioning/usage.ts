import type { RuntimeContext } from '../../runtime/context.ts';
import type { RouteSpec } from '../../runtime/route-spec.ts';
import type { RunningWorker, WorkerHealth } from '../../runtime/workers.ts';
import type { VersionUse } from '../../storage/index.ts';
import { ApiError } from '../errors/api-error.ts';

export const VERSION_USAGE_PATH = '/_ninefold/versions/usage';
/** How often a process adds what it counted to the store (and once more when it stops). */
export const USAGE_FLUSH_MS = 10_000;
const DAY_MS = 86_400_000;
const MAX_DAYS = 400;

interface Tally {
  readonly version: string;
  readonly caller: string;
  /** Days since the epoch (UTC). */
  readonly day: number;
  count: number;
  lastMs: number;
}

/**
 * Who calls which API version: each request adds one to a counter in memory (version → caller, for the running UTC
 * day; no text is made per request), and the counters go to the store every USAGE_FLUSH_MS as one batch of
 * upserts, so a request writes nothing; every process adds to the same rows. A batch that fails is kept and added
 * again with the next one.
 */
export const createVersionUsage = (ctx: RuntimeContext) => {
  let today = Number.NaN;
  let counts = new Map<string, Map<string, Tally>>();
  /** Counters of days gone by (and of batches that failed), until the next flush. */
  let earlier: Tally[] = [];
  let flushing: Promise<void> = Promise.resolve();

  const count = (version: string, caller: string): void => {
    const ms = ctx.now().getTime();
    const day = Math.floor(ms / DAY_MS);
    if (day !== today) {
      for (const callers of counts.values()) earlier.push(...callers.values());
      counts = new Map();
      today = day;
    }
    let callers = counts.get(version);
    if (!callers) {
      callers = new Map();
      counts.set(version, callers);
    }
    const tally = callers.get(caller);
    if (!tally) callers.set(caller, { version, caller, day, count: 1, lastMs: ms });
    else {
      tally.count++;
      if (ms > tally.lastMs) tally.lastMs = ms;
    }
  };

  /** Everything counted since the last flush, one tally per (version, caller, day), and the counters emptied. */
  const take = (): Tally[] => {
    const tallies = earlier;
    for (const callers of counts.values()) tallies.push(...callers.values());
    earlier = [];
    counts = new Map();
    const merged = new Map<string, Tally>();
    for (const t of tallies) {
      const key = `${t.version}\u0000${t.day}\u0000${t.caller}`;
      const row = merged.get(key);
      if (!row) merged.set(key, { ...t });
      else {
        row.count += t.count;
        row.lastMs = Math.max(row.lastMs, t.lastMs);
      }
    }
    return [...merged.values()];
  };

  const rowOf = (t: Tally): VersionUse => ({
    version: t.version,
    caller: t.caller,
    day: new Date(t.day * DAY_MS).toISOString().slice(0, 10),
    count: t.count,
    lastSeen: new Date(t.lastMs).toISOString(),
  });

  /** Adds what was counted to the store; one flush at a time, in order. */
  const flush = (): Promise<void> => {
    flushing = flushing
      .catch(() => undefined)
      .then(async () => {
        const tallies = take();
        if (tallies.length === 0) return;
        try {
          await ctx.store.versionUsage.add(tallies.map(rowOf));
        } catch (error) {
          earlier.push(...tallies);
          throw error;
        }
      });
    return flushing;
  };

  const start = (health: WorkerHealth): RunningWorker => {
    const tick = () =>
      flush().then(
        () => health.ok(),
        (error) => health.failed(error, 'adding API version usage to the store'),
      );
    const timer = setInterval(tick, USAGE_FLUSH_MS);
    timer.unref();
    return {
      async stop() {
        clearInterval(timer);
        await flush().catch(() => undefined);
      },
    };
  };

  return { count, flush, start };
};

/** Rows of the store grouped per version: each caller's count over the days asked, and when it was last seen. */
const summarise = (ids: readonly string[], rows: readonly VersionUse[]) => {
  const versions = new Map(
    ids.map((id) => [id, new Map<string, { caller: string; count: number; lastSeen: string }>()]),
  );
  for (const row of rows) {
    const callers = versions.get(row.version);
    if (!callers) continue; // a version the spec no longer declares
    const seen = callers.get(row.caller);
    if (!seen) callers.set(row.caller, { caller: row.caller, count: row.count, lastSeen: row.lastSeen });
    else {
      seen.count += row.count;
      if (row.lastSeen > seen.lastSeen) seen.lastSeen = row.lastSeen;
    }
  }
  return [...versions].reverse().map(([version, callers]) => {
    const list = [...callers.values()].sort((a, b) => b.count - a.count || a.caller.localeCompare(b.caller));
    const lastSeen = list.reduce<string | null>((at, c) => (at === null || c.lastSeen > at ? c.lastSeen : at), null);
    return { version, count: list.reduce((n, c) => n + c.count, 0), lastSeen, callers: list };
  });
};

/**
 * `GET /_ninefold/versions/usage?days=N` (a built-in `admin` route: the admin role): per version, newest first, how
 * many requests each caller made in it over the last N days (default 30, today included) and when it last did.
 */
export const versionUsageRoute = (ctx: RuntimeContext, usage: ReturnType<typeof createVersionUsage>): RouteSpec => ({
  method: 'GET',
  path: VERSION_USAGE_PATH,
  operation: 'versions.usage',
  kind: { action: 'versions.usage', builtIn: 'admin' },
  body: 'none',
  handler: async ({ query }) => {
    const text = query.days;
    const days =
      text === undefined ? 30 : typeof text === 'string' && /^[1-9][0-9]{0,3}$/.test(text) ? Number(text) : 0;
    if (!(days >= 1 && days <= MAX_DAYS))
      throw new ApiError('invalid_query', `days must be a whole number from 1 to ${MAX_DAYS}.`);
    const since = new Date(ctx.now().getTime() - (days - 1) * DAY_MS).toISOString().slice(0, 10);
    // This process's own counts first, so the answer includes every request it has answered.
    await usage.flush();
    const ids = ctx.plan.versioning?.ids ?? [];
    return {
      status: 200,
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ since, data: summarise(ids, await ctx.store.versionUsage.list(since)) }),
    };
  },
});
