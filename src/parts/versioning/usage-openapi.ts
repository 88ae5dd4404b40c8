import type { Plan } from '../../plan/types.ts';
import { ALWAYS, errorResponses } from '../errors/openapi.ts';
import type { BuiltInApi, OpenApiObject } from '../openapi-model.ts';
import { ref, success } from '../openapi-model.ts';

const CALLER: OpenApiObject = {
  type: 'object',
  required: ['caller', 'count', 'lastSeen'],
  properties: {
    caller: { type: 'string', description: 'The principal’s subject; empty for anonymous callers.' },
    count: { type: 'integer', minimum: 1, description: 'Requests in this version over the days asked.' },
    lastSeen: { type: 'string', format: 'date-time' },
  },
  additionalProperties: false,
};

/** `GET /_ninefold/versions/usage`: served when the spec declares versions and has schemes (an admin to ask). */
export const versionUsageApi = (plan: Plan): BuiltInApi => {
  const versioning = plan.versioning;
  if (!versioning || plan.auth.schemes.size === 0) return { operations: [], schemas: {} };
  const example = {
    since: '2026-10-28',
    data: [...versioning.ids].reverse().map((version, i) => ({
      version,
      count: i === 0 ? 0 : 42,
      lastSeen: i === 0 ? null : '2026-11-26T09:30:00.000Z',
      callers: i === 0 ? [] : [{ caller: 'alice', count: 42, lastSeen: '2026-11-26T09:30:00.000Z' }],
    })),
  };
  return {
    operations: [
      {
        method: 'get',
        path: `${plan.service.basePath}/_ninefold/versions/usage`,
        kind: { action: 'versions.usage', builtIn: 'admin' },
        operation: {
          operationId: 'getVersionUsage',
          summary: 'Read who calls each API version',
          description:
            'Per API version, newest first: the requests each caller made in it over the last `days` days (UTC, today included) and when it last did. Other processes’ requests show within 10 seconds.',
          tags: ['Admin'],
          parameters: [
            {
              name: 'days',
              in: 'query',
              description: 'How many days back, today included (1 to 400).',
              schema: { type: 'integer', minimum: 1, maximum: 400, default: 30 },
            },
            ref('parameters', 'RequestId'),
          ],
          responses: {
            '200': success('Use of each version.', ref('schemas', 'VersionUsage'), example),
            ...errorResponses(plan.errors, [...ALWAYS, 'invalid_query']),
          },
        },
      },
    ],
    schemas: {
      VersionUsage: {
        type: 'object',
        required: ['since', 'data'],
        properties: {
          since: { type: 'string', format: 'date', description: 'The first day counted.' },
          data: {
            type: 'array',
            items: {
              type: 'object',
              required: ['version', 'count', 'lastSeen', 'callers'],
              properties: {
                version: { type: 'string', enum: [...versioning.ids] },
                count: { type: 'integer', minimum: 0 },
                lastSeen: { type: ['string', 'null'], format: 'date-time' },
                callers: { type: 'array', items: CALLER },
              },
              additionalProperties: false,
            },
          },
        },
        additionalProperties: false,
      },
    },
  };
};
