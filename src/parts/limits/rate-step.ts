import type { FastifyReply } from 'fastify';
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
  /** The clock in milliseconds: Date.now, or the server's injected clock (tests). */
  readonly nowMs: () => number;
  readonly onStoreFailure: 'open' | 'closed';
  /** Renders a refusal of a route once (PartHost.cannedProblem). */
  readonly canned: (route: PipelineRoute, error: ApiError) => CannedProblem;
  /** The addresses of callers without credentials refused lately: the front door decides their requests. */
  readonly refused: RefusedCallers;
}

/** Callers whose cells (and addresses refused lately) are kept; past it a map starts again. */
export const KEPT_CALLERS = 4096;

/**
 * The addresses of callers without credentials that the rate step refused lately. The front door decides only their
 * requests (a refusal there costs a fraction of one in the lifecycle); every other request is decided by the rate step
 * once Fastify has routed it, so a request let through is looked up once, by Fastify. An address leaves the set when
 * the door lets one of its requests through.
 */
export class RefusedCallers {
  readonly #addresses = new Set<string>();
  /** True when no caller was refused lately: the door has nothing to decide. */
  get none(): boolean {
    return this.#addresses.size === 0;
  }
  has(address: string): boolean {
    return this.#addresses.has(address);
  }
  add(address: string): void {
    if (this.#addresses.size >= KEPT_CALLERS) this.#addresses.clear();
    this.#addresses.add(address);
  }
  delete(address: string): void {
    this.#addresses.delete(address);
  }
}

/** The peer address of each open connection, read once: Node's `remoteAddress` getter costs ~500 instructions a call. */
const peers = new WeakMap<object, string>();

/** The address of the socket a request came on (before trusted proxies); undefined once the socket is closed. */
export const peerAddress = (socket: { readonly remoteAddress?: string | undefined }): string | undefined => {
  let address = peers.get(socket);
  if (address === undefined) {
    address = socket.remoteAddress;
    if (address !== undefined) peers.set(socket, address);
  }
  return address;
};

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

/** The policies one request counts against (the general one first), with their RateLimit-Policy field written once. */
export interface PolicySet {
  readonly policies: readonly PreparedPolicy[];
  readonly header: string;
  /** The last RateLimit field written for the set, and its `r` and `t` per policy: far below a limit they repeat. */
  readonly last: { text: string; readonly numbers: number[] };
}

const policySet = (policies: readonly PreparedPolicy[]): PolicySet => ({
  policies,
  header: policies.map((p) => p.item).join(', '),
  last: { text: '', numbers: new Array(policies.length * 2).fill(-1) },
});

/**
 * The policy sets of one route: per general policy a caller may get, the set with the route's own; `none` when
 * no policy applies to a caller. Built once per route, so that a request allocates no header text but its state.
 */
export const routePolicies = (rate: RatePlan, route: PipelineRoute) => {
  const ownPolicy = endpointPolicy(rate, {
    operation: route.operation,
    method: route.method,
    ...(route.root ? {} : { path: route.path }),
  });
  const own = ownPolicy && prepare(ownPolicy);
  const sets = new Map(allGeneral(rate).map((p) => [p.name, policySet(own ? [prepare(p), own] : [prepare(p)])]));
  const ownOnly = own ? policySet([own]) : undefined;
  const generalOf = generalPolicy(rate);
  return {
    any: own !== undefined || rate.default !== undefined || rate.roles.size > 0,
    /** The set a caller counts against, or undefined when none. */
    of: (principal: Principal | undefined): PolicySet | undefined => {
      const general = generalOf(principal);
      return general ? sets.get(general.name) : ownOnly;
    },
  };
};

/** The cells of one caller (`ip:…`, `p:…`) in a set: the buckets a request takes from. */
export const cellsOf = (set: PolicySet, who: string): Cell[] => {
  const cells: Cell[] = [];
  for (const p of set.policies)
    cells.push({ key: `{${who}}:${p.name}`, limit: p.rate.limit, windowMs: p.rate.windowMs });
  return cells;
};

/**
 * The cells of the callers seen lately, by caller (an address, or a subject) and `prefix` (`ip:`, `p:`): a caller
 * sending many requests builds its keys once. Built again when the caller's set changed (a subject's roles).
 */
export const callerCells = (prefix: 'ip:' | 'p:') => {
  const kept = new Map<string, { readonly set: PolicySet; readonly cells: Cell[] }>();
  return (set: PolicySet, caller: string): Cell[] => {
    let entry = kept.get(caller);
    if (entry === undefined || entry.set !== set) {
      if (kept.size >= KEPT_CALLERS) kept.clear();
      entry = { set, cells: cellsOf(set, `${prefix}${caller}`) };
      kept.set(caller, entry);
    }
    return entry.cells;
  };
};

/** The RateLimit field after a verdict: each policy's remaining quota and seconds until it is whole. */
export const stateOf = (set: PolicySet, verdict: Verdict): string => {
  const { last } = set;
  let same = true;
  for (let i = 0; i < set.policies.length; i++) {
    const cell = verdict.cells[i] as CellState;
    const t = resetSeconds(cell.resetMs);
    if (last.numbers[2 * i] !== cell.remaining || last.numbers[2 * i + 1] !== t) {
      same = false;
      last.numbers[2 * i] = cell.remaining;
      last.numbers[2 * i + 1] = t;
    }
  }
  if (same) return last.text;
  let state = '';
  for (let i = 0; i < set.policies.length; i++)
    state += `${i ? ', ' : ''}${(set.policies[i] as PreparedPolicy).state}${last.numbers[2 * i]};t=${last.numbers[2 * i + 1]}`;
  last.text = state;
  return state;
};

/** The symbol of a Fastify reply's header object: undefined until the first reply, null when it has none. */
let replyHeaders: symbol | null | undefined;

/**
 * Adds the RateLimit fields to a reply. Fastify's `reply.header` lowercases the name and looks for Set-Cookie on
 * each call; these names are lowercase already, so they go straight into the reply's header object (the one Fastify
 * hands to Node's writeHead, found once by its symbol), or through `reply.header` if a Fastify has no such object.
 */
export const addFields = (reply: FastifyReply, policy: string, state: string): void => {
  replyHeaders ??= Object.getOwnPropertySymbols(reply).find((s) => s.description === 'fastify.reply.headers') ?? null;
  const headers =
    replyHeaders === null
      ? undefined
      : (reply as unknown as Record<symbol, Record<string, unknown> | undefined>)[replyHeaders];
  if (headers === undefined || typeof headers !== 'object') {
    reply.header('ratelimit-policy', policy);
    reply.header('ratelimit', state);
    return;
  }
  headers['ratelimit-policy'] = policy;
  headers.ratelimit = state;
};

/** The names of the policies a refused request is over, for `violated-policies`. */
export const violatedOf = (set: PolicySet, verdict: Verdict): string[] =>
  verdict.violated.map((i) => (set.policies[i] as PreparedPolicy).name);

/** The 503 a request gets when the counters cannot be reached and `onStoreFailure` is closed. */
export const countersUnavailable = () =>
  new ApiError('limits_unavailable', 'Rate limits cannot be checked right now.', undefined, undefined, {
    'retry-after': '1',
  });

/** The error a refusal renders: `rate_limited` naming the policies it is over. */
export const rateLimited = (violated: readonly string[]) =>
  new ApiError('rate_limited', `Over the rate limit (${violated.join(', ')}); retry after the time given.`, undefined, {
    'violated-policies': violated,
  });

/** Renders each set of violated policies once, on its first use, and reuses it. */
export const byViolated = <T>(render: (violated: readonly string[]) => T) => {
  const rendered = new Map<string, T>();
  return (violated: readonly string[]): T => {
    const key = violated.join('\n');
    let done = rendered.get(key);
    if (done === undefined) {
      done = render(violated);
      rendered.set(key, done);
    }
    return done;
  };
};

/** Where the front door leaves its decision on Node's request: the RateLimit fields of a request it let through. */
export const DECIDED = Symbol('ninefold.rateDecided');

export interface Decided {
  /** The fields of a request let through; null when the counters failed open (nothing to tell, nothing to count). */
  [DECIDED]?: { readonly policy: string; readonly state: string } | null;
}

/**
 * The limit phase's rate step of one route, or undefined when no policy can apply to it. Per request: who is
 * counted (the principal, or the client address when anonymous or `by: ip`), one decision over the general and the
 * route's policy together, the RateLimit fields on the answer, and 429 `rate_limited` before the body is read.
 * A refusal is answered from text prepared at start-up (no error thrown, no error handler, nothing serialised); the
 * address of a caller without credentials it refuses goes to the front door (RefusedCallers), which decides that
 * caller's next requests before Fastify. A request the front door already counted (front-door.ts) is not counted
 * again: the step only adds its fields.
 */
export const compileRateStep = (deps: RateDeps, route: PipelineRoute): Step | undefined => {
  if (!limitable(route)) return undefined;
  const sets = routePolicies(deps.rate, route);
  if (!sets.any) return undefined;
  const refusal = byViolated((violated) => deps.canned(route, rateLimited(violated)));
  const byIp = deps.rate.by === 'ip';
  const anonymous = sets.of(undefined);
  const byAddress = callerCells('ip:');
  const bySubject = callerCells('p:');

  /** The fields of a request let through, or its refusal; `address` is that of a caller without credentials. */
  const apply = (exchange: Exchange, set: PolicySet, verdict: Verdict, address: string | undefined) => {
    const state = stateOf(set, verdict);
    const { reply } = exchange;
    if (verdict.allowed) return addFields(reply, set.header, state);
    refusal(violatedOf(set, verdict))(reply, {
      'ratelimit-policy': set.header,
      ratelimit: state,
      'retry-after': retryAfter(verdict.retryAfterMs),
    });
    exchange.answered = true;
    if (address !== undefined) deps.refused.add(address);
  };
  // Open: served without RateLimit fields (nothing is known to tell); closed: refused.
  const failed = () => {
    if (deps.onStoreFailure === 'open') return;
    throw countersUnavailable();
  };

  return (exchange) => {
    const { request, principal } = exchange;
    const decided = (request.raw as Decided)[DECIDED];
    if (decided !== undefined) {
      if (decided !== null) addFields(exchange.reply, decided.policy, decided.state);
      return;
    }
    const set = principal === undefined ? anonymous : sets.of(principal);
    if (!set) return;
    const subject = byIp || !principal?.subject ? undefined : principal.subject;
    const address =
      subject === undefined ? deps.address(peerAddress(request.socket) ?? request.ip, request.headers) : undefined;
    let verdict: Verdict | Promise<Verdict>;
    try {
      const cells = address === undefined ? bySubject(set, subject as string) : byAddress(set, address);
      verdict = deps.counters.take(cells, deps.nowMs());
    } catch {
      return failed();
    }
    const door = principal === undefined ? address : undefined;
    if (verdict instanceof Promise) return verdict.then((known) => apply(exchange, set, known, door), failed);
    apply(exchange, set, verdict, door);
  };
};
