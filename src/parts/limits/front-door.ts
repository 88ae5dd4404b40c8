import type { IncomingMessage, ServerResponse } from 'node:http';
import FindMyWay from 'find-my-way';
import type { Plan } from '../../plan/types.ts';
import type { RawProblem } from '../../runtime/canned-problem.ts';
import type { FrontDoor, FrontDoorHost } from '../../runtime/front-door.ts';
import { type PipelineRoute, ROUTER_OPTIONS, toFastifyPath } from '../../runtime/route-spec.ts';
import { routeAccess } from '../auth/route-access.ts';
import type { ApiError } from '../errors/api-error.ts';
import type { Cell, Verdict } from './gcra.ts';
import { retryAfter } from './rate-headers.ts';
import {
  byViolated,
  callerCells,
  DECIDED,
  type Decided,
  limitable,
  type PolicySet,
  peerAddress,
  type RateDeps,
  rateLimited,
  routePolicies,
  stateOf,
  violatedOf,
} from './rate-step.ts';

/** What the front door needs besides the rate step's deps. */
export interface FrontDoorDeps extends RateDeps {
  readonly plan: Plan;
  /** Renders a refusal of a route once, for Node's response (PartHost.rawProblem). */
  readonly raw: (route: PipelineRoute, error: ApiError) => RawProblem;
}

/** A route the door decides: the policies every caller of it counts against, and its refusals. */
interface DoorRoute {
  readonly set: PolicySet;
  readonly refusal: (violated: readonly string[]) => RawProblem;
  /** The cells of the callers seen lately, by address: a caller sending many requests builds its keys once. */
  readonly cells: (set: PolicySet, address: string) => Cell[];
}

const unused = () => {};

/**
 * Whether a request may carry a credential of the spec's schemes: an Authorization or Cookie header, a header an API
 * key scheme reads, or any query string when a scheme reads one. Generous on purpose: a request it holds as
 * credentialed only goes on to authentication and the rate step, as every request did before the front door.
 */
const credentialed = (plan: Plan): ((request: IncomingMessage, url: string) => boolean) | undefined => {
  const schemes = [...plan.auth.schemes.values()];
  if (schemes.length === 0) return undefined;
  const headers = ['authorization', 'cookie'];
  let query = false;
  for (const s of schemes) {
    if (s.type !== 'apiKey') continue;
    const where = s.in ?? 'header';
    if (where === 'header') headers.push((s.name ?? 'X-Api-Key').toLowerCase());
    if (where === 'query') query = true;
  }
  return (request, url) => {
    for (const name of headers) if (request.headers[name] !== undefined) return true;
    return query && url.includes('?');
  };
};

/**
 * The rate step, moved in front of Fastify for the requests of callers it refused lately (RefusedCallers), so that a
 * caller over its limit is refused for a fraction of what a refusal in the lifecycle costs, while a request below
 * every limit is decided once, by the rate step, after Fastify's own routing (no second route lookup). It decides
 * those requests it can decide before routing (runtime/front-door.ts): those without credentials on a public route
 * (every route of a spec without authentication), which are counted by client address under the anonymous policy
 * and the route's own, whatever `by` says. It finds the route with a router of its own, built at start-up with
 * Fastify's options; counts the request once; refuses it with the same 429 the rate step writes, before Fastify
 * builds anything for it; and leaves a request it lets through its RateLimit fields (DECIDED), which the rate step
 * then only adds (and takes the caller out of the refused ones). Everything else (credentials, a route that needs
 * them, a path Fastify would not route to a limited route) goes on untouched to the rate step.
 */
export const compileFrontDoor = (
  deps: FrontDoorDeps,
  routes: readonly PipelineRoute[],
  host: FrontDoorHost,
): FrontDoor | undefined => {
  const router = FindMyWay(ROUTER_OPTIONS);
  const carriesCredentials = credentialed(deps.plan);
  let decided = 0;
  for (const route of routes) {
    // A caller the route may refuse 401 or 403 is answered by authentication first, and takes nothing from a rate.
    const { access, roles } = routeAccess(deps.plan, route.kind);
    if (!limitable(route) || access.kind !== 'public' || roles.length > 0) continue;
    const set = routePolicies(deps.rate, route).of(undefined);
    if (!set) continue;
    const door: DoorRoute = {
      set,
      refusal: byViolated((violated) => deps.raw(route, rateLimited(violated))),
      cells: callerCells('ip:'),
    };
    const path = toFastifyPath(route.template);
    router.on(route.method, path, unused, door);
    decided++;
    // Fastify serves HEAD as GET, with the GET route's steps.
    if (route.method === 'GET' && !router.hasRoute('HEAD', path)) router.on('HEAD', path, unused, door);
  }
  if (decided === 0) return undefined;

  const { refused } = deps;
  /** Lets the request through with its fields, or refuses it with the same 429 the rate step writes. */
  const apply = (
    door: DoorRoute,
    request: IncomingMessage & Decided,
    response: ServerResponse<IncomingMessage>,
    url: string,
    address: string,
    verdict: Verdict,
  ): boolean => {
    const state = stateOf(door.set, verdict);
    if (verdict.allowed) {
      request[DECIDED] = { policy: door.set.header, state };
      refused.delete(address);
      return true;
    }
    const headers = host.headers(request);
    headers.push(
      'ratelimit-policy',
      door.set.header,
      'ratelimit',
      state,
      'retry-after',
      retryAfter(verdict.retryAfterMs),
    );
    door.refusal(violatedOf(door.set, verdict))(response, url, headers);
    const query = url.indexOf('?');
    host.answered(request, query < 0 ? url : url.slice(0, query), 429, headers[1] as string);
    return false;
  };
  // Open: served without RateLimit fields and not counted again; closed: the rate step tries again and refuses.
  const failed = (request: IncomingMessage & Decided) => {
    if (deps.onStoreFailure === 'open') request[DECIDED] = null;
  };

  return (request, response, url, pass) => {
    // Most requests: no caller was refused lately, and the rate step decides once Fastify has routed the request.
    if (refused.none) return true;
    const address = deps.address(peerAddress(request.socket) ?? '', request.headers);
    if (!refused.has(address)) return true;
    const found = router.find(request.method as 'GET', url);
    // A caller with credentials is counted, and maybe under another policy, once they are verified.
    if (!found || carriesCredentials?.(request, url)) return true;
    const door = found.store as DoorRoute;
    let verdict: Verdict | Promise<Verdict>;
    try {
      verdict = deps.counters.take(door.cells(door.set, address), deps.nowMs());
    } catch {
      failed(request);
      return true;
    }
    // In process the verdict is known at once: no closure, no promise.
    if (!(verdict instanceof Promise)) return apply(door, request, response, url, address, verdict);
    let passed = false;
    const once = () => {
      if (passed || response.headersSent) return;
      passed = true;
      pass(request, response);
    };
    verdict
      .then(
        (known) => {
          if (apply(door, request, response, url, address, known)) once();
        },
        () => {
          failed(request);
          once();
        },
      )
      .catch(once);
    return false;
  };
};
