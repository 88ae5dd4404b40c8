import { isRecord, stringList } from '../../spec/check-context.ts';
import type { ServiceSpec } from '../../spec/schema.ts';
import type { PathSegment } from '../../spec/source-map.ts';
import { asRecord, type Raw, resourceMap, transitionMap } from '../resources/lookup.ts';
import { collectionSegment } from '../resources/naming.ts';
import { OPERATIONS } from './operations.ts';
import { bindPath, keyModel } from './path-binding.ts';
import { DEFAULT_OPERATIONS } from './plan.ts';
import { defaultItemPath, OPERATION_ROUTES } from './route-plan.ts';

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

/** The item path: the get operation's own, else the collection path and the key (or {id}). */
export const itemPathOf = (spec: ServiceSpec, name: string, resource: Raw): string => {
  const own = asRecord(asRecord(endpointEntry(spec, name)?.overrides).get).path;
  if (typeof own === 'string') return own;
  const model = keyModel(spec);
  const collection = collectionPathOf(spec, name, resource);
  const parents = bindPath(model, name, collection, false).parents.map((g) => g.field);
  return defaultItemPath(model, name, collection, parents);
};

/** The operations a resource serves. */
export const operationsOf = (spec: ServiceSpec, name: string): string[] => {
  const listed = endpointEntry(spec, name)?.operations;
  return Array.isArray(listed)
    ? stringList(listed).filter((o) => (OPERATIONS as readonly string[]).includes(o))
    : [...DEFAULT_OPERATIONS];
};

/** Every route: resource operations, transitions, then custom endpoints, in that order. */
export const declaredRoutes = (spec: ServiceSpec, skip: ReadonlySet<string> = new Set()): DeclaredRoute[] => {
  const routes: DeclaredRoute[] = [];
  for (const [name, resource] of resourceMap(spec)) {
    if (skip.has(name)) continue;
    const collection = collectionPathOf(spec, name, resource);
    const item = itemPathOf(spec, name, resource);
    const entry = endpointEntry(spec, name);
    const pointer: PathSegment[] = typeof entry?.path === 'string' ? ['endpoints', name, 'path'] : ['resources', name];
    const at = typeof entry?.path === 'string' ? 'value' : 'key';
    const overrides = asRecord(entry?.overrides);
    const updateMethod = asRecord(overrides.update).method;
    for (const op of operationsOf(spec, name)) {
      const [, method = 'GET', isItem] = OPERATION_ROUTES.find(([o]) => o === op) ?? [];
      const own = asRecord(overrides[op]).path;
      const served = op === 'update' && typeof updateMethod === 'string' ? updateMethod : method;
      routes.push(
        typeof own === 'string'
          ? {
              method: served,
              path: own,
              what: `${name}.${op}`,
              pointer: ['endpoints', name, 'overrides', op, 'path'],
              at: 'value',
            }
          : { method: served, path: isItem ? item : collection, what: `${name}.${op}`, pointer, at },
      );
    }
    const self = asRecord(entry?.self);
    if (typeof self.path === 'string')
      for (const op of stringList(self.operations)) {
        const [, method = 'GET'] = OPERATION_ROUTES.find(([o]) => o === op) ?? [];
        const served = op === 'update' && typeof updateMethod === 'string' ? updateMethod : method;
        routes.push({
          method: served,
          path: self.path,
          what: `${name}.self.${op}`,
          pointer: ['endpoints', name, 'self', 'path'],
          at: 'value',
        });
      }
    for (const [l, named] of Object.entries(asRecord(entry?.lists))) {
      const path = asRecord(named).path;
      if (typeof path === 'string')
        routes.push({
          method: 'GET',
          path,
          what: `${name}.lists.${l}`,
          pointer: ['endpoints', name, 'lists', l, 'path'],
          at: 'value',
        });
    }
    const relation = asRecord(entry?.relation);
    if (typeof relation.path === 'string')
      for (const method of [typeof relation.add === 'string' ? relation.add : 'POST', 'DELETE'])
        routes.push({
          method,
          path: relation.path,
          what: `${name}.relation`,
          pointer: ['endpoints', name, 'relation', 'path'],
          at: 'value',
        });
    for (const [t, transition] of transitionMap(resource)) {
      const segment = typeof transition.path === 'string' ? transition.path : t;
      routes.push({
        method: 'POST',
        path: `${item}/${segment.replace(/^\/+/, '')}`,
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
