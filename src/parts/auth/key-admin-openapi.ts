import type { Plan } from '../../plan/types.ts';
import { ALWAYS, BODY, errorResponses, IDEMPOTENCY } from '../errors/openapi.ts';
import { type BuiltInApi, jsonBody, type OpenApiObject, ref, success } from '../openapi-model.ts';

const EXAMPLE_TIME = '2026-01-15T09:30:00.000Z';
const EXAMPLE_KEY_ID = 'key_3f2a9c1e5b7d4e8f';

/** The roles of a key: some of the declared ones, or none when the spec declares no roles. */
const rolesSchema = (roles: readonly string[], minItems = 0): OpenApiObject =>
  roles.length
    ? { type: 'array', ...(minItems ? { minItems } : {}), items: { type: 'string', enum: [...roles] } }
    : { type: 'array', maxItems: 0, items: { type: 'string' } };

const keyProperties = (roles: readonly string[], versions?: readonly string[]): Record<string, OpenApiObject> => ({
  id: { type: 'string', examples: [EXAMPLE_KEY_ID] },
  subject: { type: 'string', description: 'Who calls with the key, as rules see it (`principal.subject`).' },
  roles: rolesSchema(roles),
  createdAt: { type: 'string', format: 'date-time' },
  expiresAt: { type: ['string', 'null'], format: 'date-time' },
  revokedAt: { type: ['string', 'null'], format: 'date-time' },
  ...(versions
    ? {
        apiVersion: {
          type: 'string',
          enum: [...versions],
          description: 'The API version served to requests with this key that name none.',
        },
      }
    : {}),
});

/**
 * The key admin API, `/_ninefold/keys`: served when the service has schemes; the `admin` role through any scheme.
 * The key itself is in the create answer only.
 */
export const keyAdminApi = (plan: Plan): BuiltInApi => {
  if (plan.auth.schemes.size === 0) return { operations: [], schemas: {} };
  const roles = [...plan.auth.roles.keys()];
  const path = `${plan.service.basePath}/_ninefold/keys`;
  const kind = { action: 'keys', builtIn: 'admin' } as const;
  const versions = plan.versioning?.ids;
  const properties = keyProperties(roles, versions);
  const required = ['id', 'subject', 'roles', 'createdAt', 'expiresAt', 'revokedAt'];
  const example = {
    id: EXAMPLE_KEY_ID,
    subject: 'ops-bot',
    roles: roles.slice(0, 1),
    createdAt: EXAMPLE_TIME,
    expiresAt: null,
    revokedAt: null,
  };
  const requestId = ref('parameters', 'RequestId');
  const tags = ['Admin'];
  return {
    schemas: {
      ApiKey: { type: 'object', required, properties, additionalProperties: false },
      ApiKeyCreated: {
        type: 'object',
        description: 'The key record and the key itself, shown this once.',
        required: [...required, 'key'],
        properties: { ...properties, key: { type: 'string', description: 'The API key to send.' } },
        additionalProperties: false,
      },
      ApiKeyCreate: {
        type: 'object',
        ...(roles.length ? { required: ['roles'] } : {}),
        properties: {
          roles: rolesSchema(roles, 1),
          subject: { type: 'string', minLength: 1, maxLength: 200 },
          expiresIn: { type: 'string', description: 'A duration such as `90d` or `P90D`.', examples: ['90d'] },
          ...(properties.apiVersion ? { apiVersion: properties.apiVersion } : {}),
        },
        additionalProperties: false,
      },
      ApiKeyList: {
        type: 'object',
        required: ['data'],
        properties: { data: { type: 'array', items: ref('schemas', 'ApiKey') } },
        additionalProperties: false,
      },
    },
    operations: [
      {
        method: 'get',
        path,
        kind,
        operation: {
          operationId: 'listApiKeys',
          summary: 'List API keys',
          tags,
          parameters: [requestId],
          responses: {
            '200': success('Every key, revoked ones too.', ref('schemas', 'ApiKeyList'), { data: [example] }),
            ...errorResponses(plan.errors, ALWAYS),
          },
        },
      },
      {
        method: 'post',
        path,
        kind,
        operation: {
          operationId: 'createApiKey',
          summary: 'Issue an API key',
          tags,
          parameters: [ref('parameters', 'IdempotencyKey'), requestId],
          requestBody: jsonBody(ref('schemas', 'ApiKeyCreate'), { roles: roles.slice(0, 1), subject: 'ops-bot' }),
          responses: {
            '201': success(
              'The key, shown this once.',
              ref('schemas', 'ApiKeyCreated'),
              {
                ...example,
                key: `${plan.auth.keyPrefix}${EXAMPLE_KEY_ID}_c2VjcmV0LWV4YW1wbGUtb25seQ`,
              },
              ['Idempotent-Replayed'],
            ),
            ...errorResponses(plan.errors, [...BODY, ...IDEMPOTENCY, ...ALWAYS]),
          },
        },
      },
      {
        method: 'delete',
        path: `${path}/{id}`,
        kind,
        operation: {
          operationId: 'revokeApiKey',
          summary: 'Revoke an API key',
          description: 'Effective on the next request.',
          tags,
          parameters: [
            { name: 'id', in: 'path', required: true, schema: { type: 'string', examples: [EXAMPLE_KEY_ID] } },
            ref('parameters', 'IdempotencyKey'),
            requestId,
          ],
          responses: {
            '204': success('Revoked.', undefined, undefined, ['Idempotent-Replayed']),
            ...errorResponses(plan.errors, ['not_found', ...IDEMPOTENCY, ...ALWAYS]),
          },
        },
      },
    ],
  };
};
