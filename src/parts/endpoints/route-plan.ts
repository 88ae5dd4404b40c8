import type { BoundPath, HttpMethod, Operation, PathBinding, ResourcePlan, ResourceRoute } from '../../plan/types.ts';
import { bindPath, itemKeyFields, type KeyModel } from './path-binding.ts';
import type { ResourceEndpointsSpec } from './schema.ts';

/** Each operation's method and whether it names one record, in the order routes are served. */
export const OPERATION_ROUTES: ReadonlyArray<readonly [Operation, HttpMethod, boolean]> = [
  ['list', 'GET', false],
  ['create', 'POST', false],
  ['get', 'GET', true],
  ['update', 'PATCH', true],
  ['replace', 'PUT', true],
  ['delete', 'DELETE', true],
];

export const isItemOperation = (op: Operation): boolean => OPERATION_ROUTES.some(([o, , item]) => o === op && item);

/** An operation's method: its own, or PUT for an update the spec serves with PUT. */
export const operationMethod = (op: Operation, entry: ResourceEndpointsSpec | undefined): HttpMethod => {
  const method = OPERATION_ROUTES.find(([o]) => o === op)?.[1] ?? 'GET';
  return op === 'update' && entry?.overrides?.update?.method ? entry.overrides.update.method : method;
};

/**
 * The default item path: the collection path, then a parameter per key field the collection does not give
 * (`/articles/{slug}`, `/repos/{owner}/{name}`), or `{id}`.
 */
export const defaultItemPath = (
  model: KeyModel,
  resource: string,
  collectionPath: string,
  parentFields: readonly string[],
): string => {
  const fields = itemKeyFields(model, resource, parentFields);
  return `${collectionPath}/${fields.map((f) => `{${f}}`).join('/')}`;
};

/** The collection path's parents, as the handlers name them (the last parameter of each group). */
export const planParentParams = (
  model: KeyModel,
  resource: string,
  collectionPath: string,
): ResourcePlan['parentParams'] =>
  bindPath(model, resource, collectionPath, false).parents.map((group) => {
    const param = group.params.at(-1) ?? '';
    const target = model.refTarget(resource, group.field) ?? '';
    const keyed = group.params.length > 1 || model.keyOf(target).length > 0;
    return { param, field: group.field, ...(keyed ? { params: group.params } : {}) };
  });

/** Whether the handlers can take a route's parameters as they come: ids only, named as the collection names them. */
const isPlain = (binding: PathBinding, parentParams: ResourcePlan['parentParams'], item: boolean): boolean =>
  binding.parents.length === parentParams.length &&
  binding.parents.every((g, i) => {
    const p = parentParams[i];
    return p && !p.params && g.params.length === 1 && g.params[0] === p.param && g.field === p.field;
  }) &&
  (!item || (binding.item.length === 1 && binding.item[0] === 'id'));

/** A path of the resource with what its parameters name. */
export const boundPath = (
  model: KeyModel,
  name: string,
  path: string,
  item: boolean,
  parentParams: ResourcePlan['parentParams'],
): BoundPath => {
  const { unbound: _, ...binding } = bindPath(model, name, path, item);
  const plain = model.keyOf(name).length === 0 && isPlain(binding, parentParams, item);
  return { path, self: false, binding, plain };
};

/** Every route of a resource: its operations on their paths (overridden or not), then the caller's own record. */
export const planRoutes = (
  model: KeyModel,
  name: string,
  entry: ResourceEndpointsSpec | undefined,
  operations: ReadonlySet<Operation>,
  paths: { readonly collection: string; readonly item: string },
  parentParams: ResourcePlan['parentParams'],
): ResourceRoute[] => {
  const routes: ResourceRoute[] = [];
  for (const [op, , item] of OPERATION_ROUTES) {
    if (!operations.has(op)) continue;
    const path = entry?.overrides?.[op]?.path ?? (item ? paths.item : paths.collection);
    routes.push({
      operation: op,
      method: operationMethod(op, entry),
      ...boundPath(model, name, path, item, parentParams),
    });
  }
  for (const op of entry?.self?.operations ?? []) {
    routes.push({
      operation: op,
      method: operationMethod(op, entry),
      path: entry?.self?.path ?? '/',
      self: true,
      binding: { parents: [], item: [] },
      plain: false,
    });
  }
  return routes;
};
