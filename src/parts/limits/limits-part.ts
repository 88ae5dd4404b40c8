import type { ServerPart } from '../../runtime/part.ts';
import { compileFrontDoor } from './front-door.ts';
import { memoryCounters } from './memory-counters.ts';
import { compileQuotaStep, quotaCounter } from './quota-step.ts';
import type { RateCounters } from './rate-counters.ts';
import { compileRateStep, RefusedCallers } from './rate-step.ts';
import { redisCounters } from './redis-counters.ts';
import { clientAddress } from './trusted-proxies.ts';
import { usageRoutes } from './usage-routes.ts';

/**
 * The limits part on the server: the limit phase of every route (rate limits, then quotas), answered before the
 * body is read, and for rate limits decided by address alone, at the front door before Fastify routes the request; the write hook that counts quotas; and the usage API. Rate counters live in Redis when one is
 * configured (NINEFOLD_REDIS_URL, or `limits.store`), shared by every instance, else in this process. A spec without
 * rates or quotas adds nothing.
 */
export const limitsPart: ServerPart = {
  name: 'limits',
  async install(host) {
    const { plan, ctx } = host;
    const { limits } = plan;
    if (limits.rate) {
      // The connection is the server's (it closes it); the failed-login limiter shares it.
      const counters: RateCounters = ctx.counterConnection ? redisCounters(ctx.counterConnection) : memoryCounters();
      const deps = {
        rate: limits.rate,
        counters,
        address: clientAddress(limits.trustProxy),
        // Milliseconds without a Date per request, unless a clock is injected (tests).
        nowMs: host.options.now ? () => ctx.now().getTime() : Date.now,
        onStoreFailure: limits.onStoreFailure,
        canned: host.cannedProblem,
        refused: new RefusedCallers(),
      };
      host.step('limit', (route) => compileRateStep(deps, route));
      const doorDeps = { ...deps, plan, raw: host.rawProblem };
      host.frontDoor((routes, door) => compileFrontDoor(doorDeps, routes, door));
    }
    if (limits.quotas.size > 0) {
      host.step('limit', (route) => compileQuotaStep(limits, ctx.store.counters, ctx.now, route));
      const counter = quotaCounter(limits, ctx.store.counters, ctx.now);
      if (counter) host.writeHook(counter);
      for (const route of usageRoutes(ctx)) host.route(route);
    }
  },
};
