import type { LimitsPlan } from '../../plan/types.ts';
import type { ServiceSpec } from '../../spec/schema.ts';
import { parseDuration, parseRate, parseSize, type Rate } from '../../spec/units.ts';
import { MAX_PAGE_SIZE } from '../endpoints/plan.ts';

export const DEFAULT_BODY_BYTES = 1024 * 1024;
export const DEFAULT_DEPTH = 32;
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

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
  };
};
