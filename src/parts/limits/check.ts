import { type CheckContext, isRecord } from '../../spec/check-context.ts';
import type { PathSegment } from '../../spec/source-map.ts';
import { parseDuration, parseRate, parseSize } from '../../spec/units.ts';
import { suggestion } from '../../spec/validate-shape.ts';
import { declaredRoutes, operationsOf, routeKey } from '../endpoints/routes.ts';
import { resourceMap, transitionMap } from '../resources/lookup.ts';

type Parse = (text: unknown) => unknown;
const PROBLEMS = {
  'invalid-rate': [parseRate, 'a rate like 100/min or 10/s'],
  'invalid-size': [parseSize, 'a size like 1mb, 512kb or 100b'],
  'invalid-duration': [parseDuration, 'a duration like 10s or PT10S'],
} as const satisfies Record<string, [Parse, string]>;

/** Semantic checks of part: limits. */
export const checkLimits = (ctx: CheckContext): void => {
  const limits = isRecord(ctx.spec.limits) ? ctx.spec.limits : {};
  const routes = new Set(declaredRoutes(ctx.spec).map((r) => routeKey(r.method, r.path)));
  const value = (code: keyof typeof PROBLEMS, text: unknown, path: PathSegment[]) => {
    const [parse, expected] = PROBLEMS[code];
    if (text !== undefined && parse(text) === undefined)
      ctx.report(code, path, `${JSON.stringify(text)} is not ${expected}`);
  };
  const perEndpoint = (code: keyof typeof PROBLEMS, map: unknown, path: PathSegment[]) => {
    if (!isRecord(map)) return;
    for (const [key, text] of Object.entries(map)) {
      value(code, text, [...path, key]);
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
  perEndpoint('invalid-rate', rate.endpoints, ['limits', 'rate', 'endpoints']);
  checkQuotas(ctx, limits.quotas, (text, path) => value('invalid-rate', text, path));
  const size = isRecord(limits.size) ? limits.size : {};
  value('invalid-size', size.body, ['limits', 'size', 'body']);
  perEndpoint('invalid-size', size.endpoints, ['limits', 'size', 'endpoints']);
  const timeouts = isRecord(limits.timeouts) ? limits.timeouts : {};
  value('invalid-duration', timeouts.request, ['limits', 'timeouts', 'request']);
  value('invalid-duration', timeouts.headers, ['limits', 'timeouts', 'headers']);
  perEndpoint('invalid-duration', timeouts.endpoints, ['limits', 'timeouts', 'endpoints']);
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
