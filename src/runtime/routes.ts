import type { RouteKind } from '../parts/auth/route-access.ts';
import { compileCustomHandler } from '../parts/endpoints/custom-runtime.ts';
import { compileListHandler } from '../parts/endpoints/list-runtime.ts';
import type { EmitDeclared } from '../parts/events/declared.ts';
import { compileRecordHandlers } from '../parts/resources/runtime.ts';
import type { StateRoute } from '../parts/states/runtime.ts';
import type { Plan } from '../plan/types.ts';
import type { Handler, RuntimeContext } from './context.ts';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface CompiledRoute {
  readonly method: Method;
  /** Path template with {params}, relative to the base path. */
  readonly path: string;
  readonly operation: string;
  /** What the route does, for access control. */
  readonly kind: RouteKind;
  readonly handler: Handler;
  /** Unsafe routes run in one transaction and honour Idempotency-Key. */
  readonly unsafe: boolean;
}

/** Every route the plan asks for, compiled once: CRUD and list per resource, then custom endpoints. */
export const compileRoutes = async (
  ctx: RuntimeContext,
  plan: Plan,
  stateRoutes: readonly StateRoute[],
  emit: EmitDeclared,
): Promise<CompiledRoute[]> => {
  const routes: CompiledRoute[] = [];
  for (const resource of plan.resources) {
    const ops = resource.operations;
    const h = compileRecordHandlers(ctx, resource);
    const add = (method: Method, path: string, operation: string, handler: Handler) =>
      routes.push({
        method,
        path,
        operation: `${resource.name}.${operation}`,
        kind: { resource: resource.name, action: operation },
        handler,
        unsafe: method !== 'GET',
      });
    if (ops.has('list')) add('GET', resource.collectionPath, 'list', compileListHandler(ctx, resource));
    if (ops.has('create')) add('POST', resource.collectionPath, 'create', h.create);
    if (ops.has('get')) add('GET', resource.itemPath, 'get', h.get);
    if (ops.has('update')) add('PATCH', resource.itemPath, 'update', h.update);
    if (ops.has('replace')) add('PUT', resource.itemPath, 'replace', h.replace);
    if (ops.has('delete')) add('DELETE', resource.itemPath, 'delete', h.remove);
  }
  for (const route of stateRoutes) {
    routes.push({ ...route, unsafe: route.method !== 'GET' });
  }
  for (const endpoint of plan.custom) {
    routes.push({
      method: endpoint.method,
      path: endpoint.path,
      operation: endpoint.name,
      kind: { action: endpoint.name, custom: true },
      handler: await compileCustomHandler(ctx, endpoint, emit),
      unsafe: endpoint.method !== 'GET',
    });
  }
  return routes;
};

/** {id} → :id for Fastify's router. */
export const toFastifyPath = (path: string): string => path.replace(/\{(\w+)\}/g, ':$1');
