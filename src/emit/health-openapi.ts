import { ALWAYS, errorResponses } from '../parts/errors/openapi.ts';
import { type BuiltInApi, ref, success } from '../parts/openapi-model.ts';
import type { Plan } from '../plan/types.ts';

/** `GET /healthz` and `GET /readyz`, at the root: public unless `auth.public` leaves `health` out. */
export const healthApi = (plan: Plan): BuiltInApi => {
  const kind = { action: 'health', builtIn: 'health' } as const;
  const tags = ['Health'];
  return {
    schemas: {
      Liveness: {
        type: 'object',
        required: ['status'],
        properties: { status: { type: 'string', enum: ['ok'] } },
        additionalProperties: false,
      },
      Readiness: {
        type: 'object',
        required: ['status', 'storage', 'workers'],
        properties: {
          status: {
            type: 'string',
            enum: ['ready', 'degraded'],
            description: '`degraded`: a background worker fails; the API still serves (its log says what failed).',
          },
          storage: {
            type: 'object',
            description: 'The database and its durability settings.',
            required: ['backend', 'journal', 'synchronous'],
            properties: { backend: { type: 'string' }, journal: { type: 'string' }, synchronous: { type: 'string' } },
          },
          workers: { type: 'object', description: 'The state of each background worker, by name.' },
        },
        additionalProperties: false,
      },
    },
    operations: [
      {
        method: 'get',
        path: '/healthz',
        kind,
        operation: {
          operationId: 'getLiveness',
          summary: 'Liveness: the process answers',
          tags,
          responses: {
            '200': success('Alive.', ref('schemas', 'Liveness'), { status: 'ok' }),
            ...errorResponses(plan.errors, ['internal']),
          },
        },
      },
      {
        method: 'get',
        path: '/readyz',
        kind,
        operation: {
          operationId: 'getReadiness',
          summary: 'Readiness: the database answers and the instance is not shutting down',
          tags,
          responses: {
            '200': success('Ready (or degraded).', ref('schemas', 'Readiness'), {
              status: 'ready',
              storage: { backend: 'sqlite', journal: 'wal', synchronous: 'full' },
              workers: {},
            }),
            // 503 shutting_down from a shutdown signal on, so that a balancer stops sending requests here.
            ...errorResponses(plan.errors, [...ALWAYS, 'shutting_down']),
          },
        },
      },
    ],
  };
};
