import type { RuntimeContext } from '../../runtime/context.ts';
import type { RouteSpec } from '../../runtime/route-spec.ts';
import { ADMIN_ROLE } from '../auth/route-access.ts';
import { ApiError } from '../errors/api-error.ts';
import { formatRate } from './docs.ts';
import { periodOf, quotaKey } from './quota-periods.ts';

const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8' };
export const USAGE_PATH = '/_ninefold/usage';

/** One caller's standing in every quota, in this period. */
const usageOf = async (ctx: RuntimeContext, subject: string) => {
  const at = ctx.now();
  const quotas = [];
  for (const [operation, quota] of ctx.plan.limits.quotas) {
    const period = periodOf(quota.windowMs, at.getTime());
    const window = await ctx.store.counters.peek(quotaKey(operation, subject, period), at);
    const used = window?.count ?? 0;
    quotas.push({
      operation,
      quota: formatRate(quota),
      limit: quota.limit,
      used,
      remaining: Math.max(0, quota.limit - used),
      periodStart: new Date(period.start).toISOString(),
      resetAt: new Date(period.end).toISOString(),
    });
  }
  return { subject, quotas };
};

/**
 * The quota usage API: GET /_ninefold/usage (the caller's own; `?subject=` someone else's, for the admin role) and
 * DELETE /_ninefold/usage/{subject} (the admin role: the subject's quotas start again at 0 in this period).
 */
export const usageRoutes = (ctx: RuntimeContext): RouteSpec[] => {
  const routes: RouteSpec[] = [
    {
      method: 'GET',
      path: USAGE_PATH,
      operation: 'usage.get',
      kind: { action: 'usage', builtIn: 'api' },
      body: 'none',
      handler: async (input) => {
        const asked = typeof input.query.subject === 'string' ? input.query.subject : undefined;
        if (asked !== undefined && asked !== input.caller && !input.principal?.roles.includes(ADMIN_ROLE))
          throw new ApiError('forbidden', 'Only the admin role may read the usage of another subject.');
        return { status: 200, headers: JSON_TYPE, body: JSON.stringify(await usageOf(ctx, asked ?? input.caller)) };
      },
    },
  ];
  if (ctx.plan.auth.schemes.size > 0)
    routes.push({
      method: 'DELETE',
      path: `${USAGE_PATH}/{subject}`,
      operation: 'usage.reset',
      kind: { action: 'usage', builtIn: 'admin' },
      body: 'none',
      handler: async (input) => {
        const subject = input.params.subject ?? '';
        const at = ctx.now().getTime();
        for (const [operation, quota] of ctx.plan.limits.quotas)
          await ctx.store.counters.reset(quotaKey(operation, subject, periodOf(quota.windowMs, at)));
        return { status: 204 };
      },
    });
  return routes;
};
