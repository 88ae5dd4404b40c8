import type { RatePlan } from '../../plan/types.ts';
import type { CannedProblem } from '../../runtime/canned-problem.ts';
import type { Exchange, Step } from '../../runtime/lifecycle.ts';
import type { PipelineRoute } from '../../runtime/route-spec.ts';
import type { Rate } from '../../spec/units.ts';
import type { Principal } from '../auth/principal.ts';
import { routeKey } from '../endpoints/routes.ts';
import { ApiError } from '../errors/api-error.ts';
import type { Cell, CellState, Verdict } from './gcra.ts';
import type { RateCounters } from './rate-counters.ts';
import { type NamedPolicy, policyItem, resetSeconds, retryAfter, sfString } from './rate-headers.ts';

/** What the rate step needs, built once at start-up. */
export interface RateDeps {
  readonly rate: RatePlan;
  readonly counters: RateCounters;
  /** The client's address from the socket's and the forwarding headers (trusted-proxies.ts). */
  readonly address: (socket: string, headers: Exchange['request']['headers']) => string;
  readonly now: () => Date;
  readonly onStoreFailure: 'open' | 'closed';
  /** Renders a refusal of a route once (PartHost.cannedProblem). */
  readonly canned: (route: PipelineRoute, error: ApiError) => CannedProblem;
}

const faster = (a: Rate, b: Rate) => a.limit / a.windowMs > b.limit / b.windowMs;

/** Built-in pages (health, docs, the API reference) are never rate limited: load balancers must reach them. */
export const limitable = (route: { readonly kind: PipelineRoute['kind'] }) =>
  !route.kind.builtIn || route.kind.builtIn === 'api' || route.kind.builtIn === 'admin';

/**
 * The general policy for a caller: the fastest rate of its roles that have one, else the default; `anonymous` for a
 * caller without credentials. Named after the role it comes from, or "default".
 */
export const generalPolicy = (rate: RatePlan) => {
  const byRole = [...rate.roles].filter(([role]) => role !== 'anonymous');
  const anonymous = rate.roles.get('anonymous');
  const fallback: NamedPolicy | undefined = rate.default ? { name: 'default', rate: rate.default } : undefined;
  const anonymousPolicy = anonymous ? { name: 'anonymous', rate: anonymous } : fallback;
  return (principal: Principal | undefined): NamedPolicy | undefined => {
    if (!principal?.subject) return anonymousPolicy;
    let best: NamedPolicy | undefined;
    for (const [role, r] of byRole)
      if (principal.roles.includes(role) && (!best || faster(r, best.rate))) best = { name: role, rate: r };
    return best ?? fallback;
  };
};

/** Every general policy a caller may get. */
export const allGeneral = (rate: RatePlan): NamedPolicy[] => [
  ...(rate.default ? [{ name: 'default', rate: rate.default }] : []),
  ...[...rate.roles].map(([name, r]) => ({ name, rate: r })),
];

/** A route as policies find it: its operation name, and its method and path under the base path (none at the root). */
export interface RouteName {
  readonly operation: string;
  readonly method: string;
  readonly path?: string;
}

/** The route's own policy: the spec names it by its route ("POST /orders") or its operation (Order.place). */
export const endpointPolicy = (rate: RatePlan, route: RouteName): NamedPolicy | undefined => {
  const own = route.path === undefined ? undefined : routeKey(route.method, route.path);
  for (const [key, r] of rate.endpoints) {
    const [method = '', path = ''] = key.trim().split(/\s+/);
    if (key === route.operation || (own && path.startsWith('/') && routeKey(method, path) === own))
      return { name: key, rate: r };
  }
  return undefined;
};

/** A policy with the text of its headers, written once. */
interface PreparedPolicy extends NamedPolicy {
  /** Its RateLimit-Policy item. */
  readonly item: string;
  /** Its RateLimit item up to the remaining quota: `"default";r=`. */
  readonly state: string;
}

const prepare = (policy: NamedPolicy): PreparedPolicy => ({
  ...policy,
  item: policyItem(policy),
  state: `${sfString(policy.name)};r=`,
});

/** The refusal of a route, per set of violated policies, rendered on its first use and then reused. */
const refusals = (deps: RateDeps, route: PipelineRoute) => {
  const byViolated = new Map<string, CannedProblem>();
  return (violated: readonly string[]): CannedProblem => {
    const key = violated.join('\n');
    let refusal = byViolated.get(key);
    if (!refusal) {
      const error = new ApiError(
        'rate_limited',
        `Over the rate limit (${violated.join(', ')}); retry after the time given.`,
        undefined,
        { 'violated-policies': violated },
      );
      refusal = deps.canned(route, error);
      byViolated.set(key, refusal);
    }
    return refusal;
  };
};

/**
 * The limit phase's rate step of one route, or undefined when no policy can apply to it. Per request: who is
 * counted (the principal, or the client address when anonymous or `by: ip`), one decision over the general and the
 * route's policy together, the RateLimit fields on the answer, and 429 `rate_limited` before the body is read.
 * A refusal is answered from text prepared at start-up (no error thrown, no error handler, nothing serialised), so
 * that it costs little more than any answer Fastify sends from a hook (bench/cpu-per-request.mjs measures it).
 */
export const compileRateStep = (deps: RateDeps, route: PipelineRoute): Step | undefined => {
  if (!limitable(route)) return undefined;
  const ownPolicy = endpointPolicy(deps.rate, {
    operation: route.operation,
    method: route.method,
    ...(route.root ? {} : { path: route.path }),
  });
  if (!ownPolicy && !deps.rate.default && deps.rate.roles.size === 0) return undefined;
  const own = ownPolicy && prepare(ownPolicy);
  const prepared = new Map(allGeneral(deps.rate).map((p) => [p.name, prepare(p)]));
  const generalOf = generalPolicy(deps.rate);
  const general = (principal: Principal | undefined) => {
    const policy = generalOf(principal);
    return policy && prepared.get(policy.name);
  };
  const refusal = refusals(deps, route);
  const byIp = deps.rate.by === 'ip';

  return (exchange) => {
    const { request, principal } = exchange;
    const who =
      !byIp && principal?.subject
        ? `p:${principal.subject}`
        : `ip:${deps.address(request.socket.remoteAddress ?? request.ip, request.headers)}`;
    const first = general(principal);
    const policies: PreparedPolicy[] = first ? (own ? [first, own] : [first]) : own ? [own] : [];
    if (policies.length === 0) return;
    const cells: Cell[] = policies.map((p) => ({
      key: `{${who}}:${p.name}`,
      limit: p.rate.limit,
      windowMs: p.rate.windowMs,
    }));
    const policyHeader = policies.length === 1 ? (first ?? own)?.item : `${first?.item}, ${own?.item}`;
    const apply = (verdict: Verdict) => {
      let state = '';
      for (let i = 0; i < policies.length; i++) {
        const cell = verdict.cells[i] as CellState;
        state += `${i ? ', ' : ''}${(policies[i] as PreparedPolicy).state}${cell.remaining};t=${resetSeconds(cell.resetMs)}`;
      }
      if (verdict.allowed) {
        exchange.reply.header('ratelimit-policy', policyHeader);
        exchange.reply.header('ratelimit', state);
        return;
      }
      const violated = verdict.violated.map((i) => (policies[i] as PreparedPolicy).name);
      refusal(violated)(exchange.reply, {
        'ratelimit-policy': policyHeader as string,
        ratelimit: state,
        'retry-after': retryAfter(verdict.retryAfterMs),
      });
      exchange.answered = true;
    };
    // Open: served without RateLimit fields (nothing is known to tell); closed: refused.
    const failed = () => {
      if (deps.onStoreFailure === 'open') return;
      throw new ApiError('limits_unavailable', 'Rate limits cannot be checked right now.', undefined, undefined, {
        'retry-after': '1',
      });
    };
    let verdict: Verdict | Promise<Verdict>;
    try {
      verdict = deps.counters.take(cells, deps.now().getTime());
    } catch {
      return failed();
    }
    if (verdict instanceof Promise) return verdict.then(apply, failed);
    apply(verdict);
  };
};
