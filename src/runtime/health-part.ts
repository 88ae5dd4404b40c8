import { ApiError } from '../parts/errors/api-error.ts';
import { shuttingDown } from './drain.ts';
import type { ServerPart } from './part.ts';

const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8' };

/**
 * `GET /healthz` (the process answers) and `GET /readyz` (the database answers; the durability setting; the state
 * of every background worker; 503 `shutting_down` from a shutdown signal on). A failing worker makes the service
 * `degraded`, not unready: the API still serves, and taking every instance out of a balancer for a worker's fault
 * would turn it into an outage; its log lines say what failed.
 */
export const healthPart: ServerPart = {
  name: 'health',
  install(host) {
    const { store } = host.ctx;
    const { drain } = host.options;
    const kind = { action: 'health', builtIn: 'health' } as const;
    host.route({
      method: 'GET',
      path: '/healthz',
      root: true,
      operation: 'health.live',
      kind,
      body: 'none',
      handler: async () => ({ status: 200, headers: JSON_TYPE, body: '{"status":"ok"}' }),
    });
    host.route({
      method: 'GET',
      path: '/readyz',
      root: true,
      operation: 'health.ready',
      kind,
      body: 'none',
      handler: async () => {
        if (drain?.draining) {
          throw shuttingDown();
        }
        try {
          await store.ping();
        } catch {
          throw new ApiError('storage_unavailable', 'The database does not answer.', undefined, undefined, {
            'retry-after': '5',
          });
        }
        const workers = host.workers();
        return {
          status: 200,
          headers: JSON_TYPE,
          body: JSON.stringify({
            status: workers.failing ? 'degraded' : 'ready',
            storage: store.durability(),
            workers: workers.report,
          }),
        };
      },
    });
  },
};
