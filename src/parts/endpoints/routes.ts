import { isRecord, stringList } from '../../spec/check-context.ts';
import type { ServiceSpec } from '../../spec/schema.ts';
import type { PathSegment } from '../../spec/source-map.ts';
import { asRecord, type Raw, resourceMap, transitionMap } from '../resources/lookup.ts';
import { collectionSegment } from '../resources/naming.ts';
import { OPERATIONS } from './operations.ts';
import { DEFAULT_OPERATIONS } from './plan.ts';

/** One route the spec declares, with where to point when it is wrong. */
export interface DeclaredRoute {
  readonly method: string;
  readonly path: string;
  readonly what: string;
  readonly pointer: PathSegment[];
  readonly at: 'key' | 'value';
}

/** Parameter names do not tell routes apart: /a/{x} and /a/{y} are one route. */
export const routeKey = (method: string, path: string): string =>
  `${method.toUpperCase()} ${path.replace(/\{[^}]*\}/g, '{}').replace(/(.)\/+$/, '$1')}`;

/** The endpoints part's entry for a resource, read defensively. */
export const endpointEntry = (spec: ServiceSpec, resource: string): Raw | undefined => {
  const entry = asRecord(spec.endpoints)[resource];
  return isRecord(entry) ? entry : undefined;
};

export const collectionPathOf = (spec: ServiceSpec, name: string, resource: Raw): string => {
  const path = endpointEntry(spec, name)?.path;
  if (typeof path === 'string') return path;
  return `/${collectionSegment(name, typeof resource.plural === 'string' ? resource.plural : undefined)}`;
};

/** The operations a resource serves. */
export const operationsOf = (spec: ServiceSpec, name: string): string[] => {
  const listed = endpointEntry(spec, name)?.operations;
  return Array.isArray(listed)
    ? stringList(listed).filter((o) => (OPERATIONS as readonly string[]).includes(o))
    : [...DEFAULT_OPERATIONS];
};

const OPERATION_ROUTES: Record<string, [method: string, item: boolean]> = {
  list: ['GET', false],
  create: ['POST', false],
  get: ['GET', true],
  update: ['PATCH', true],
  replace: ['PUT', true],
  delete: ['DELETE', true],
};

/** Every route: resource operations, transitions, then custom endpoints, in that order. */
export const declaredRoutes = (spec: ServiceSpec, skip: ReadonlySet<string> = new Set()): DeclaredRoute[] => {
  const routes: DeclaredRoute[] = [];
  for (const [name, resource] of resourceMap(spec)) {
    if (skip.has(name)) continue;
    const collection = collectionPathOf(spec, name, resource);
    const entry = endpointEntry(spec, name);
    const pointer: PathSegment[] = typeof entry?.path === 'string' ? ['endpoints', name, 'path'] : ['resources', name];
    const at = typeof entry?.path === 'string' ? 'value' : 'key';
    for (const op of operationsOf(spec, name)) {
      const [method, item] = OPERATION_ROUTES[op] ?? ['GET', false];
      routes.push({ method, path: item ? `${collection}/{id}` : collection, what: `${name}.${op}`, pointer, at });
    }
    for (const [t, transition] of transitionMap(resource)) {
      const segment = typeof transition.path === 'string' ? transition.path : t;
      routes.push({
        method: 'POST',
        path: `${collection}/{id}/${segment.replace(/^\/+/, '')}`,
        what: `transition ${name}.${t}`,
        pointer: ['resources', name, 'states', 'transitions', t],
        at: 'key',
      });
    }
  }
  const custom = isRecord(spec.endpoints) && Array.isArray(spec.endpoints.custom) ? spec.endpoints.custom : [];
  for (const [i, c] of custom.entries()) {
    if (!isRecord(c) || typeof c.method !== 'string' || typeof c.path !== 'string') continue;
    const what = `custom endpoint ${typeof c.name === 'string' ? c.name : i}`;
    routes.push({ method: c.method, path: c.path, what, pointer: ['endpoints', 'custom', i, 'path'], at: 'value' });
  }
  return routes;
};
