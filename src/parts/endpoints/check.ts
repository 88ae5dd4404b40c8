import { type CheckContext, isRecord, recordEntries } from '../../spec/check-context.ts';
import type { PathSegment } from '../../spec/source-map.ts';
import { suggestion } from '../../spec/validate-shape.ts';
import { BUILT_IN_ERRORS } from '../errors/catalogue.ts';
import { knownEventNames } from '../events/event-names.ts';
import { checkFields } from '../resources/check-field.ts';
import { asRecord, type Raw, resourceMap } from '../resources/lookup.ts';
import { checkListOptions } from './check-list.ts';
import { checkResourcePaths } from './check-paths.ts';
import { checkRelations } from './check-relations.ts';
import { checkSession } from './check-session.ts';
import { checkWire } from './check-wire.ts';
import { pathParams } from './plan.ts';
import { collectionPathOf, declaredRoutes, routeKey } from './routes.ts';

const NOT_RESOURCES = new Set(['custom', 'basePath', 'wire']);
const HANDLER = /^[^#\s]+#[A-Za-z_$][\w$]*$/;

/** Semantic checks of part: endpoints. */
export const checkEndpoints = (ctx: CheckContext): void => {
  const resources = resourceMap(ctx.spec);
  const names = [...resources.keys()];
  for (const [name, entry] of recordEntries<Raw>(ctx.spec.endpoints)) {
    if (NOT_RESOURCES.has(name)) continue;
    const resource = resources.get(name);
    if (!resource) {
      ctx.report(
        'unknown-operation-resource',
        ['endpoints', name],
        `no resource "${name}"${suggestion(name, names)}`,
        'key',
      );
      continue;
    }
    checkResourcePaths(ctx, name, resource, entry);
    checkListOptions(ctx, resource, entry.list, ['endpoints', name, 'list']);
    checkRelations(ctx, name, resource, entry);
    checkSession(ctx, name, resource, entry.session);
  }
  const shadowed = checkCollectionClashes(ctx, resources);
  checkRoutes(ctx, shadowed);
  checkCustomEndpoints(ctx, names);
  checkWire(ctx);
};

/** Two resources on one collection path; the second one's routes are left out of the route check. */
const checkCollectionClashes = (ctx: CheckContext, resources: Map<string, Raw>): Set<string> => {
  const seen = new Map<string, string>();
  const shadowed = new Set<string>();
  for (const [name, resource] of resources) {
    const key = routeKey('', collectionPathOf(ctx.spec, name, resource));
    const first = seen.get(key);
    if (first === undefined) {
      seen.set(key, name);
      continue;
    }
    shadowed.add(name);
    ctx.report(
      'duplicate-name',
      ['resources', name],
      `${name} and ${first} share the collection path ${key.trim()}`,
      'key',
    );
  }
  return shadowed;
};

/**
 * First path segments the service serves itself at the root (docs pages, health); `_ninefold` (key admin) and,
 * when the spec has events, `events` also under a base path.
 */
const ROOT_RESERVED = new Set(['docs', 'openapi.json', 'asyncapi.json', 'healthz', 'readyz']);

const checkRoutes = (ctx: CheckContext, shadowed: ReadonlySet<string>) => {
  const seen = new Map<string, string>();
  const basePath = isRecord(ctx.spec.endpoints) ? ctx.spec.endpoints.basePath : undefined;
  const reported = new Set<string>();
  // With events, the service serves /events, /events/{id} and the stream under the base path.
  const eventsOn = knownEventNames(ctx.spec).length > 0;
  for (const route of declaredRoutes(ctx.spec, shadowed)) {
    const first = route.path.split('/')[1] ?? '';
    const where = JSON.stringify(route.pointer);
    const reserved =
      first === '_ninefold' || (first === 'events' && eventsOn) || (!basePath && ROOT_RESERVED.has(first));
    if (reserved && !reported.has(where)) {
      reported.add(where);
      ctx.report(
        'reserved-path',
        route.pointer,
        `${route.what} would be served at ${route.path}, which the service serves itself; choose another path (or set endpoints.basePath)`,
        route.at,
      );
    }
    const key = routeKey(route.method, route.path);
    const earlier = seen.get(key);
    if (earlier === undefined) seen.set(key, route.what);
    else
      ctx.report('duplicate-route', route.pointer, `${route.what} is ${key}, already served by ${earlier}`, route.at);
  }
};

const checkCustomEndpoints = (ctx: CheckContext, resources: string[]) => {
  const custom = isRecord(ctx.spec.endpoints) ? ctx.spec.endpoints.custom : undefined;
  if (!Array.isArray(custom)) return;
  const catalogue = isRecord(ctx.spec.errors) && isRecord(ctx.spec.errors.catalogue) ? ctx.spec.errors.catalogue : {};
  const codes = [...Object.keys(BUILT_IN_ERRORS), ...Object.keys(catalogue)];
  const names = new Set<string>();
  for (const [i, c] of custom.entries()) {
    if (!isRecord(c)) continue;
    const base: PathSegment[] = ['endpoints', 'custom', i];
    if (typeof c.name === 'string') {
      if (names.has(c.name)) ctx.report('duplicate-name', [...base, 'name'], `another custom endpoint is "${c.name}"`);
      names.add(c.name);
    }
    if (typeof c.handler === 'string' && !HANDLER.test(c.handler))
      ctx.report('invalid-handler', [...base, 'handler'], `"${c.handler}" is not module#export (./handlers.ts#run)`);
    if (typeof c.path === 'string') checkCustomParams(ctx, c, c.path, base);
    if (Array.isArray(c.errors))
      for (const [j, code] of c.errors.entries())
        if (typeof code === 'string' && !codes.includes(code))
          ctx.report('unknown-error-code', [...base, 'errors', j], `no error "${code}"${suggestion(code, codes)}`);
    const scope = { ctx, resources };
    const request = asRecord(c.request);
    for (const part of ['params', 'query', 'body'])
      checkFields(scope, request[part], [...base, 'request', part], false);
    if (isRecord(c.response)) checkFields(scope, c.response.fields, [...base, 'response', 'fields'], false);
  }
};

/**
 * Path parameters of a custom endpoint are implicit strings unless `request.params` is given; when it is,
 * it must declare exactly the path's parameters.
 */
const checkCustomParams = (ctx: CheckContext, c: Raw, path: string, base: PathSegment[]) => {
  const inPath = pathParams(path);
  const seen = new Set<string>();
  for (const p of inPath) {
    const problem = p === '' ? 'an empty {} names no parameter' : seen.has(p) ? `{${p}} appears twice` : undefined;
    if (problem) ctx.report('unmatched-path-parameter', [...base, 'path'], problem);
    seen.add(p);
  }
  const params = isRecord(c.request) && isRecord(c.request.params) ? c.request.params : undefined;
  if (!params) return;
  for (const p of seen)
    if (!(p in params))
      ctx.report('unmatched-path-parameter', [...base, 'path'], `{${p}} is not declared in request.params`);
  for (const p of Object.keys(params))
    if (!seen.has(p))
      ctx.report('unmatched-path-parameter', [...base, 'request', 'params', p], `"${p}" is not in the path`, 'key');
};
