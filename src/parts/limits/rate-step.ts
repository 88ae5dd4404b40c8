import type { RatePlan } from '../../plan/types.ts';
import type { Exchange, Step } from '../../runtime/lifecycle.ts';
import type { PipelineRoute } from '../../runtime/route-spec.ts';
import type { Rate } from '../../spec/units.ts';
import type { Principal } from '../auth/principal.ts';
import { routeKey } from '../endpoints/routes.ts';
import { ApiError } from '../errors/api-error.ts';
import type { Cell, Verdict } from './gcra.ts';
import type { RateCounters } from './rate-counters.ts';
import { type NamedPolicy, policyItem, retryAfter, stateItem } from './rate-headers.ts';

/** What the rate step needs, built once at start-up. */
export interface RateDeps {
  readonly rate: RatePlan;
  readonly counters: RateCounters;
  /** The client's address from the socket's and the forwarding headers (trusted-proxies.ts). */
  readonly address: (socket: string, headers: Exchange['request']['headers']) => string;
  readonly now: () => Date;
  readonly onStoreFailure: 'open' | 'closed';
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

/**
 * The limit phase's rate step of one route, or undefined when no policy can apply to it. Per request: who is
 * counted (the principal, or the client address when anonymous or `by: ip`), one decision over the general and the
 * route's policy together, the RateLimit fields on the answer, and 429 `rate_limited` before the body is read.
 */
export const compileRateStep = (deps: RateDeps, route: PipelineRoute): Step | undefined => {
  if (!limitable(route)) return undefined;
  const general = generalPolicy(deps.rate);
  const own = endpointPolicy(deps.rate, {
    operation: route.operation,
    method: route.method,
    ...(route.root ? {} : { path: route.path }),
  });
  // Every RateLimit-Policy item this route can send, written once.
  const items = new Map<string, string>();
  for (const p of [own, ...allGeneral(deps.rate)]) if (p) items.set(p.name, policyItem(p));
  const byIp = deps.rate.by === 'ip';
  if (!own && !deps.rate.default && deps.rate.roles.size === 0) return undefined;

  return (exchange) => {
    const { request, principal } = exchange;
    const who =
      !byIp && principal?.subject
        ? `p:${principal.subject}`
        : `ip:${deps.address(request.socket.remoteAddress ?? request.ip, request.headers)}`;
    const policies: NamedPolicy[] = [];
    const cells: Cell[] = [];
    const first = general(principal);
    if (first) {
      policies.push(first);
      cells.push({ key: `{${who}}:${first.name}`, limit: first.rate.limit, windowMs: first.rate.windowMs });
    }
    if (own) {
      policies.push(own);
      cells.push({ key: `{${who}}:${own.name}`, limit: own.rate.limit, windowMs: own.rate.windowMs });
    }
    if (cells.length === 0) return;
    const policyHeader = policies.map((p) => items.get(p.name)).join(', ');
    const apply = (verdict: Verdict) => {
      const state = verdict.cells.map((c, i) => stateItem((policies[i] as NamedPolicy).name, c)).join(', ');
      exchange.reply.header('ratelimit-policy', policyHeader);
      exchange.reply.header('ratelimit', state);
      if (verdict.allowed) return;
      const violated = verdict.violated.map((i) => (policies[i] as NamedPolicy).name);
      throw new ApiError(
        'rate_limited',
        `Over the rate limit (${violated.join(', ')}); retry after the time given.`,
        undefined,
        { 'violated-policies': violated },
        { 'retry-after': retryAfter(verdict.retryAfterMs) },
      );
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
