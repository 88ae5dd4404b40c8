import type { Handler } from '../../runtime/context.ts';
import type { ServerPart } from '../../runtime/part.ts';
import type { BodyKind, Method } from '../../runtime/route-spec.ts';
import { declaredEmitter } from '../events/declared.ts';
import { compileRecordHandlers, type RecordHandlers } from '../resources/runtime.ts';
import { compileCustomHandler } from './custom-runtime.ts';
import { compileListHandler } from './list-runtime.ts';
import { createRecordDoors } from './record-door.ts';
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
      const ops = resource.operations;
      const h = compileRecordHandlers(ctx, resource);
      handlers.set(resource.name, h);
      const add = (method: Method, path: string, operation: string, body: BodyKind, handler: Handler) =>
        host.route({
          method,
          path,
          operation: `${resource.name}.${operation}`,
          kind: { resource: resource.name, action: operation },
          body,
          handler: operation === 'list' ? handler : wireRecordRoute(resource, handler),
        });
      if (ops.has('list')) add('GET', resource.collectionPath, 'list', 'none', compileListHandler(ctx, resource));
      if (ops.has('create')) add('POST', resource.collectionPath, 'create', 'json', h.create);
      if (ops.has('get')) add('GET', resource.itemPath, 'get', 'none', h.get);
      if (ops.has('update')) add('PATCH', resource.itemPath, 'update', 'json', h.update);
      if (ops.has('replace')) add('PUT', resource.itemPath, 'replace', 'json', h.replace);
      if (ops.has('delete')) add('DELETE', resource.itemPath, 'delete', 'none', h.remove);
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
