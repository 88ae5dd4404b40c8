import type { GuardsPlan, LimitsPlan } from '../../plan/types.ts';
import type { ServiceSpec } from '../../spec/schema.ts';
import { parseDuration, parseRate, parseSize, type Rate } from '../../spec/units.ts';
import { MAX_PAGE_SIZE } from '../endpoints/plan.ts';
import { routeKey } from '../endpoints/routes.ts';

export const DEFAULT_BODY_BYTES = 1024 * 1024;
export const DEFAULT_DEPTH = 32;
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
export const DEFAULT_ARRAY_ITEMS = 10_000;
export const DEFAULT_URL_BYTES = 8 * 1024;
/** Node's own default maxHeaderSize. */
export const DEFAULT_HEADER_BYTES = 16 * 1024;
export const DEFAULT_HEADERS_TIMEOUT_MS = 20_000;
export const DEFAULT_RECEIVE_TIMEOUT_MS = 30_000;
export const DEFAULT_RETRY_AFTER_S = 2;
export const DEFAULT_CRITICAL_RESERVE = 16;

/** "POST /orders/{id}": value, keyed by routeKey(); values that do not parse are left out (check reports them). */
const perRoute = (map: Record<string, string> | undefined, parse: (text: unknown) => number | undefined) => {
  const out = new Map<string, number>();
  for (const [key, text] of Object.entries(map ?? {})) {
    const [method = '', path = ''] = key.trim().split(/\s+/);
    const value = parse(text);
    if (value !== undefined) out.set(routeKey(method, path), value);
  }
  return out;
};

const planGuards = (spec: ServiceSpec): GuardsPlan => {
  const size = spec.limits?.size;
  const timeouts = spec.limits?.timeouts;
  const overload = spec.limits?.overload;
  const lagMs = parseDuration(overload?.lag);
  const receiveTimeoutMs = parseDuration(timeouts?.body) ?? DEFAULT_RECEIVE_TIMEOUT_MS;
  return {
    arrayItems: size?.items ?? DEFAULT_ARRAY_ITEMS,
    urlBytes: parseSize(size?.url) ?? DEFAULT_URL_BYTES,
    headerBytes: parseSize(size?.headers) ?? DEFAULT_HEADER_BYTES,
    bodyBytes: perRoute(size?.endpoints, parseSize),
    // Undeclared, the headers' time-out is never longer than the whole request's (declared, check.ts sees to it).
    headersTimeoutMs: parseDuration(timeouts?.headers) ?? Math.min(DEFAULT_HEADERS_TIMEOUT_MS, receiveTimeoutMs),
    receiveTimeoutMs,
    timeoutMs: perRoute(timeouts?.endpoints, parseDuration),
    ...(lagMs !== undefined
      ? {
          overload: {
            lagMs,
            retryAfterS: Math.max(
              1,
              Math.ceil((parseDuration(overload?.retryAfter) ?? DEFAULT_RETRY_AFTER_S * 1000) / 1000),
            ),
            reserve: overload?.reserve ?? DEFAULT_CRITICAL_RESERVE,
            critical: new Set(
              (overload?.critical ?? []).map((key) => {
                const [method = '', path = ''] = key.trim().split(/\s+/);
                return routeKey(method, path);
              }),
            ),
          },
        }
      : {}),
  };
};

const rates = (map: Record<string, string> | undefined): Map<string, Rate> => {
  const out = new Map<string, Rate>();
  for (const [key, text] of Object.entries(map ?? {})) {
    const rate = parseRate(text);
    if (rate) out.set(key, rate);
  }
  return out;
};

export const planLimits = (spec: ServiceSpec): LimitsPlan => {
  const l = spec.limits;
  const defaultRate = parseRate(l?.rate?.default);
  return {
    bodyBytes: parseSize(l?.size?.body) ?? DEFAULT_BODY_BYTES,
    maxPageSize: l?.size?.pageSize ?? MAX_PAGE_SIZE,
    depth: l?.size?.depth ?? DEFAULT_DEPTH,
    requestTimeoutMs: parseDuration(l?.timeouts?.request) ?? DEFAULT_REQUEST_TIMEOUT_MS,
    ...(l?.rate
      ? {
          rate: {
            ...(defaultRate ? { default: defaultRate } : {}),
            by: l.rate.by ?? 'principal',
            endpoints: rates(l.rate.endpoints),
            roles: rates(l.rate.roles),
          },
        }
      : {}),
    quotas: rates(l?.quotas),
    trustProxy: l?.trustProxy ?? [],
    ...(l?.store ? { store: l.store } : {}),
    onStoreFailure: l?.onStoreFailure ?? 'open',
    guards: planGuards(spec),
  };
};
