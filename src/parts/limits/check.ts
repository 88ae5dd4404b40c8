import { type CheckContext, isRecord } from '../../spec/check-context.ts';
import type { PathSegment } from '../../spec/source-map.ts';
import { parseDuration, parseRate, parseSize } from '../../spec/units.ts';
import { suggestion } from '../../spec/validate-shape.ts';
import { declaredRoutes, operationsOf, routeKey } from '../endpoints/routes.ts';
import { resourceMap, transitionMap } from '../resources/lookup.ts';
import { builtInRoutes } from './built-in-routes.ts';
import { parseProxy } from './trusted-proxies.ts';

type Parse = (text: unknown) => unknown;
/** A limit of 0 would switch Node's own limit off, not make it strict. */
const positive =
  (parse: (text: unknown) => number | undefined): Parse =>
  (text) => {
    const n = parse(text);
    return n !== undefined && n > 0 ? n : undefined;
  };
const PROBLEMS = {
  'invalid-rate': [parseRate, 'a rate like 100/min or 10/s'],
  'invalid-size': [positive(parseSize), 'a size like 1mb, 512kb or 100b'],
  'invalid-duration': [positive(parseDuration), 'a duration like 10s or PT10S, longer than 0'],
} as const satisfies Record<string, [Parse, string]>;

/** Semantic checks of part: limits. */
export const checkLimits = (ctx: CheckContext): void => {
  const limits = isRecord(ctx.spec.limits) ? ctx.spec.limits : {};
  const declared = declaredRoutes(ctx.spec);
  // Built-in API routes (event log, webhook endpoints, key admin, usage) take per-route limits too.
  const routes = new Set([
    ...declared.map((r) => routeKey(r.method, r.path)),
    ...builtInRoutes(ctx.spec).map((key) => {
      const [method = '', path = ''] = key.split(' ');
      return routeKey(method, path);
    }),
  ]);
  // Rates may also name an operation: Order.create, a transition Order.place, a custom endpoint's name.
  const operations = new Set(declared.map((r) => r.what.replace(/^(transition|custom endpoint) /, '')));
  const value = (code: keyof typeof PROBLEMS, text: unknown, path: PathSegment[]) => {
    const [parse, expected] = PROBLEMS[code];
    if (text !== undefined && parse(text) === undefined)
      ctx.report(code, path, `${JSON.stringify(text)} is not ${expected}`);
  };
  const perEndpoint = (code: keyof typeof PROBLEMS, map: unknown, path: PathSegment[], byOperation = false) => {
    if (!isRecord(map)) return;
    for (const [key, text] of Object.entries(map)) {
      value(code, text, [...path, key]);
      if (byOperation && operations.has(key)) continue;
      const [method = '', route = ''] = key.trim().split(/\s+/);
      if (!route.startsWith('/') || !routes.has(routeKey(method, route)))
        ctx.report(
          'unknown-limit-target',
          [...path, key],
          `"${key}" is not a route of this service (like "POST /orders")`,
          'key',
        );
    }
  };

  const rate = isRecord(limits.rate) ? limits.rate : {};
  value('invalid-rate', rate.default, ['limits', 'rate', 'default']);
  value('invalid-rate', rate.authFailures, ['limits', 'rate', 'authFailures']);
  perEndpoint('invalid-rate', rate.endpoints, ['limits', 'rate', 'endpoints'], true);
  checkRoles(ctx, rate.roles, (text, path) => value('invalid-rate', text, path));
  checkStore(ctx, limits);
  checkQuotas(ctx, limits.quotas, (text, path) => value('invalid-rate', text, path));
  const size = isRecord(limits.size) ? limits.size : {};
  for (const key of ['body', 'url', 'headers'] as const) value('invalid-size', size[key], ['limits', 'size', key]);
  perEndpoint('invalid-size', size.endpoints, ['limits', 'size', 'endpoints']);
  const timeouts = isRecord(limits.timeouts) ? limits.timeouts : {};
  for (const key of ['request', 'headers', 'body'] as const)
    value('invalid-duration', timeouts[key], ['limits', 'timeouts', key]);
  perEndpoint('invalid-duration', timeouts.endpoints, ['limits', 'timeouts', 'endpoints']);
  checkOverload(ctx, limits.overload, routes, (text, path) => value('invalid-duration', text, path));
  const conflict = (a: number | undefined, b: number | undefined, path: PathSegment[], message: string) => {
    if (a !== undefined && b !== undefined && a >= b) ctx.report('limit-conflict', path, message);
  };
  conflict(
    parseSize(size.url),
    parseSize(size.headers),
    ['limits', 'size', 'url'],
    `size.url (${size.url}) must be below size.headers (${size.headers}): the request line counts against the headers`,
  );
  const headers = parseDuration(timeouts.headers);
  conflict(
    headers === undefined ? undefined : headers + 1,
    parseDuration(timeouts.body),
    ['limits', 'timeouts', 'headers'],
    `timeouts.headers (${timeouts.headers}) may not be longer than timeouts.body (${timeouts.body}), which includes the headers`,
  );
};

/** limits.overload: its durations, critical routes that are routes of this service, and a reserve for them. */
const checkOverload = (
  ctx: CheckContext,
  overload: unknown,
  routes: ReadonlySet<string>,
  duration: (text: unknown, path: PathSegment[]) => void,
) => {
  if (!isRecord(overload)) return;
  duration(overload.lag, ['limits', 'overload', 'lag']);
  duration(overload.retryAfter, ['limits', 'overload', 'retryAfter']);
  const critical = Array.isArray(overload.critical) ? overload.critical : [];
  if (overload.reserve !== undefined && critical.length === 0)
    ctx.report(
      'limit-conflict',
      ['limits', 'overload', 'reserve'],
      'overload.reserve is the capacity kept for the critical routes, and none are listed in overload.critical',
      'key',
    );
  if (!Array.isArray(overload.critical)) return;
  for (const [i, key] of overload.critical.entries()) {
    const [method = '', route = ''] = String(key).trim().split(/\s+/);
    if (!route.startsWith('/') || !routes.has(routeKey(method, route)))
      ctx.report(
        'unknown-limit-target',
        ['limits', 'overload', 'critical', i],
        `"${key}" is not a route of this service (like "GET /orders/{id}")`,
      );
  }
};

/** Role rates name declared roles, or `anonymous` for callers without credentials. */
const checkRoles = (ctx: CheckContext, roles: unknown, rate: (text: unknown, path: PathSegment[]) => void) => {
  if (!isRecord(roles)) return;
  const auth = isRecord(ctx.spec.auth) ? ctx.spec.auth : {};
  const declared = [...Object.keys(isRecord(auth.roles) ? auth.roles : {}), 'anonymous'];
  for (const [role, text] of Object.entries(roles)) {
    const path = ['limits', 'rate', 'roles', role];
    rate(text, path);
    if (!declared.includes(role))
      ctx.report('unknown-limit-target', path, `no role "${role}"${suggestion(role, declared)}`, 'key');
  }
};

/** trustProxy entries are addresses or CIDRs; the counter store is a redis:// URL. */
const checkStore = (ctx: CheckContext, limits: Record<string, unknown>) => {
  const proxies = Array.isArray(limits.trustProxy) ? limits.trustProxy : [];
  for (const [i, entry] of proxies.entries())
    if (typeof entry !== 'string' || !parseProxy(entry))
      ctx.report(
        'invalid-trust-proxy',
        ['limits', 'trustProxy', i],
        `${JSON.stringify(entry)} is not an address or CIDR`,
      );
  if (typeof limits.store === 'string' && !/^rediss?:\/\/[^\s]+$/.test(limits.store))
    ctx.report('invalid-limits-store', ['limits', 'store'], 'the counter store is a redis:// or rediss:// URL');
};

/** Quota keys are <Resource>.<operation or transition>, like Order.create or Order.place. */
const checkQuotas = (ctx: CheckContext, quotas: unknown, rate: (text: unknown, path: PathSegment[]) => void) => {
  if (!isRecord(quotas)) return;
  const resources = resourceMap(ctx.spec);
  for (const [key, text] of Object.entries(quotas)) {
    const path = ['limits', 'quotas', key];
    rate(text, path);
    const [name = '', action = ''] = key.split('.');
    const resource = resources.get(name);
    const actions = resource ? [...operationsOf(ctx.spec, name), ...transitionMap(resource).keys()] : [];
    if (!resource)
      ctx.report(
        'unknown-limit-target',
        path,
        `no resource "${name}"${suggestion(name, [...resources.keys()])}`,
        'key',
      );
    else if (!actions.includes(action))
      ctx.report(
        'unknown-limit-target',
        path,
        `${name} has no operation "${action}"${suggestion(action, actions)}`,
        'key',
      );
  }
};
