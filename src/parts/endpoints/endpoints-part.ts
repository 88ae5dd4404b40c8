import type { Operation } from '../../plan/types.ts';
import type { Handler } from '../../runtime/context.ts';
import type { ServerPart } from '../../runtime/part.ts';
import type { BodyKind, Method } from '../../runtime/route-spec.ts';
import { createSession } from '../auth/session.ts';
import { declaredEmitter } from '../events/declared.ts';
import { compileRecordHandlers, type RecordHandlers } from '../resources/runtime.ts';
import { compileCustomHandler } from './custom-runtime.ts';
import { compileDistinctHandler } from './distinct-runtime.ts';
import { compileListHandler } from './list-runtime.ts';
import { createRecordDoors } from './record-door.ts';
import { compileRelationHandlers } from './relation-runtime.ts';
import { boundHandler } from './route-binder.ts';
import { wireRecordRoute } from './wire-runtime.ts';

/**
 * The endpoints part on the server: each resource's list and CRUD operations the spec asks for, then the custom
 * endpoints, which reach records through doors built on the same CRUD handlers.
 */
export const endpointsPart: ServerPart = {
  name: 'endpoints',
  async install(host) {
    const { ctx, plan } = host;
    const handlers = new Map<string, RecordHandlers>();
    for (const resource of plan.resources) {
      const h = compileRecordHandlers(ctx, resource);
      handlers.set(resource.name, h);
      const add = (method: Method, path: string, operation: Operation, body: BodyKind, handler: Handler) =>
        host.route({
          method,
          path,
          operation: `${resource.name}.${operation}`,
          kind: { resource: resource.name, action: operation },
          body,
          handler: operation === 'list' ? handler : wireRecordRoute(resource, handler),
        });
      const handlerOf: Record<Operation, [BodyKind, Handler]> = {
        list: ['none', compileListHandler(ctx, resource)],
        create: ['json', h.create],
        get: ['none', h.get],
        update: ['json', h.update],
        replace: ['json', h.replace],
        delete: ['none', h.remove],
      };
      const session = resource.session ? createSession(ctx, resource, resource.session) : undefined;
      for (const route of resource.routes) {
        const [body, handler] = handlerOf[route.operation];
        const bound = boundHandler(ctx, resource, route, handler);
        const answered =
          session && route.operation === 'create'
            ? session.signUp(bound)
            : session && route.self
              ? session.own(bound)
              : bound;
        add(route.method, route.path, route.operation, body, answered);
      }
      // Named lists answer as the list does (its access, paging and envelope); a distinct list answers values.
      for (const named of resource.lists)
        host.route({
          method: 'GET',
          path: named.path,
          operation: `${resource.name}.${named.name}`,
          kind: { resource: resource.name, action: 'list' },
          body: 'none',
          handler: named.distinct
            ? compileDistinctHandler(ctx, resource, named)
            : compileListHandler(ctx, resource, named),
        });
      const relation = resource.relation;
      if (relation) {
        // Adding and removing take the join resource's create and delete access.
        const { add: adds, remove } = compileRelationHandlers(ctx, resource, relation, h);
        const op = (action: 'create' | 'delete') => ({
          path: relation.path,
          kind: { resource: resource.name, action },
          body: 'none' as const,
        });
        host.route({ method: relation.add, operation: `${resource.name}.add`, ...op('create'), handler: adds });
        host.route({ method: 'DELETE', operation: `${resource.name}.remove`, ...op('delete'), handler: remove });
      }
      if (session && resource.session)
        host.route({
          method: 'POST',
          path: resource.session.signIn,
          operation: `${resource.name}.signIn`,
          kind: { resource: resource.name, action: 'signIn' },
          body: 'json',
          // The failed-login counts must outlive a refused sign-in: no transaction to roll them back.
          transaction: false,
          handler: wireRecordRoute(resource, session.signIn(h.get)),
        });
    }
    const emit = declaredEmitter(ctx);
    const doors = createRecordDoors(ctx, handlers);
    for (const endpoint of plan.custom) {
      host.route({
        method: endpoint.method,
        path: endpoint.path,
        operation: endpoint.name,
        kind: { action: endpoint.name, custom: true },
        body: endpoint.body ? 'json' : 'optional',
        handler: await compileCustomHandler(ctx, endpoint, emit, doors),
      });
    }
  },
};
