import type { LimitsPlan } from '../../plan/types.ts';
import type { WriteEvent, WriteHook } from '../../runtime/context.ts';
import type { Step } from '../../runtime/lifecycle.ts';
import type { PipelineRoute } from '../../runtime/route-spec.ts';
import type { CounterStore } from '../../storage/index.ts';
import { ApiError } from '../errors/api-error.ts';
import { periodOf, quotaKey } from './quota-periods.ts';
import { policyItem, retryAfter, stateItem } from './rate-headers.ts';

/** The most Retry-After adds to the time until the period ends: a minute, and at most 1 % of the period. */
const MAX_SPREAD_MS = 60_000;

/**
 * Milliseconds a caller's Retry-After adds to the end of the period, the same for the caller every time and spread
 * over callers (FNV-1a of the subject and operation), so that callers refused until midnight do not all come back
 * in the same second (RELIABILITY.md L4; draft-ietf-httpapi-ratelimit-headers §8.5). The quota itself resets at
 * the boundary.
 */
export const retrySpreadMs = (subject: string, operation: string, periodMs: number): number => {
  let hash = 0x811c9dc5;
  for (const c of `${subject}\n${operation}`) hash = Math.imul(hash ^ (c.codePointAt(0) as number), 0x01000193);
  return (hash >>> 0) % Math.max(1, Math.min(MAX_SPREAD_MS, Math.floor(periodMs / 100)));
};

const exceeded = (operation: string, limit: number, period: { end: number }, now: number, spreadMs: number) =>
  new ApiError(
    'quota_exceeded',
    `The quota of ${limit} ${operation} per period is used up; it resets at ${new Date(period.end).toISOString()}.`,
    undefined,
    { 'violated-policies': [operation], resetAt: new Date(period.end).toISOString() },
    { 'retry-after': retryAfter(period.end - now + spreadMs) },
  );

/** Adds one item to a list-valued field another step may have set already. */
const appendHeader = (
  reply: { getHeader(n: string): unknown; header(n: string, v: string): unknown },
  name: string,
  item: string,
) => {
  const before = reply.getHeader(name);
  reply.header(name, before ? `${String(before)}, ${item}` : item);
};

/** Write events and the quota key (`Resource.operation`) each one counts against. */
const operationOf = (event: WriteEvent): string => {
  const resource = event.resource.name;
  switch (event.kind) {
    case 'created':
      return `${resource}.create`;
    case 'updated':
      return `${resource}.update`;
    case 'deleted':
      return `${resource}.delete`;
    case 'transitioned':
      return `${resource}.${event.transition.name}`;
  }
};

/**
 * The limit phase's quota step of a route whose operation has a quota: the caller's count in this period is read
 * (one read, no write) and a caller with none left is refused 429 `quota_exceeded` before the body is read. The
 * answer carries the quota as a second RateLimit policy, `r` counting this request as if it succeeds.
 */
export const compileQuotaStep = (
  limits: LimitsPlan,
  counters: CounterStore,
  now: () => Date,
  route: PipelineRoute,
): Step | undefined => {
  const quota = limits.quotas.get(route.operation);
  if (!quota || !route.kind.resource) return undefined;
  const operation = route.operation;
  const item = policyItem({ name: operation, rate: quota });
  return async (exchange) => {
    const at = now();
    const period = periodOf(quota.windowMs, at.getTime());
    const subject = exchange.principal?.subject ?? '';
    const window = await counters.peek(quotaKey(operation, subject, period), at);
    const used = window?.count ?? 0;
    appendHeader(exchange.reply, 'ratelimit-policy', item);
    appendHeader(
      exchange.reply,
      'ratelimit',
      stateItem(operation, { remaining: Math.max(0, quota.limit - used - 1), resetMs: period.end - at.getTime() }),
    );
    if (used >= quota.limit) {
      exchange.reply.header('ratelimit', stateItem(operation, { remaining: 0, resetMs: period.end - at.getTime() }));
      throw exceeded(operation, quota.limit, period, at.getTime(), retrySpreadMs(subject, operation, quota.windowMs));
    }
  };
};

/**
 * Counts a successful call inside its own transaction (L5: only what succeeds counts; replays of an
 * Idempotency-Key, refusals and failures do not): one more in the caller's period, and a write that takes the count
 * past the quota (callers racing for the last one) rolls back with 429 `quota_exceeded`.
 */
export const quotaCounter = (limits: LimitsPlan, counters: CounterStore, now: () => Date): WriteHook | undefined => {
  if (limits.quotas.size === 0) return undefined;
  const resources = new Set([...limits.quotas.keys()].map((k) => k.split('.')[0]));
  return async (event) => {
    if (!resources.has(event.resource.name)) return;
    const operation = operationOf(event);
    const quota = limits.quotas.get(operation);
    if (!quota) return;
    const at = now().getTime();
    const period = periodOf(quota.windowMs, at);
    const window = await counters.hit(quotaKey(operation, event.actor, period), new Date(at), period.end - at);
    if (window.count > quota.limit)
      throw exceeded(operation, quota.limit, period, at, retrySpreadMs(event.actor, operation, quota.windowMs));
  };
};
