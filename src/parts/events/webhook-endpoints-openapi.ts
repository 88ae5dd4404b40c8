import type { Plan } from '../../plan/types.ts';
import { ALWAYS, BODY, errorResponses, IDEMPOTENCY } from '../errors/openapi.ts';
import { type BuiltInApi, jsonBody, type OpenApiObject, ref, success } from '../openapi-model.ts';
import { deliverySchemas } from './log-openapi.ts';

const EXAMPLE_ID = 'we_01JD7X3K9Q2M4N6P8R0S2T4V6W';
const EXAMPLE_TIME = '2026-01-15T09:30:00.000Z';
const EXAMPLE_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const TAGS = ['Webhook endpoints'];

/** The fields of an endpoint as its owner sees it (never the secret, which create and rotation show once). */
const endpointProperties = (
  events: readonly string[],
  versions?: readonly string[],
): Record<string, OpenApiObject> => ({
  id: { type: 'string', examples: [EXAMPLE_ID] },
  url: { type: 'string', format: 'uri', maxLength: 2048 },
  events: {
    type: 'array',
    items: { type: 'string', enum: [...events] },
    description: 'The event types sent to it; empty for every type.',
  },
  description: { type: 'string', maxLength: 500 },
  createdAt: { type: 'string', format: 'date-time' },
  disabled: {
    type: 'boolean',
    description: 'True once it failed for too long; PATCH `disabled: false` re-enables it.',
  },
  disabledAt: { type: 'string', format: 'date-time' },
  disabledReason: { type: 'string' },
  ...(versions
    ? {
        apiVersion: {
          type: 'string',
          enum: [...versions],
          description: 'The API version its payloads are written in: the one it was registered in, unless given.',
        },
      }
    : {}),
});

const schemas = (events: readonly string[], versions?: readonly string[]): Record<string, OpenApiObject> => {
  const properties = endpointProperties(events, versions);
  const pin = properties.apiVersion ? { apiVersion: properties.apiVersion } : {};
  const required = ['id', 'url', 'events', 'createdAt', 'disabled'];
  return {
    WebhookEndpoint: { type: 'object', required, properties, additionalProperties: false },
    WebhookEndpointCreated: {
      type: 'object',
      description: 'The endpoint and its signing secret, shown this once.',
      required: [...required, 'secret'],
      properties: { ...properties, secret: { type: 'string', description: 'The signing secret (`whsec_…`).' } },
      additionalProperties: false,
    },
    WebhookEndpointCreate: {
      type: 'object',
      required: ['url'],
      properties: { url: properties.url, events: properties.events, description: properties.description, ...pin },
      additionalProperties: false,
    },
    WebhookEndpointPatch: {
      type: 'object',
      properties: {
        url: properties.url,
        events: properties.events,
        description: properties.description,
        disabled: { type: 'boolean', enum: [false], description: 'Only `false`: re-enables a disabled endpoint.' },
        ...pin,
      },
      additionalProperties: false,
    },
    WebhookEndpointList: {
      type: 'object',
      required: ['data'],
      properties: { data: { type: 'array', items: ref('schemas', 'WebhookEndpoint') } },
      additionalProperties: false,
    },
    WebhookSecret: {
      type: 'object',
      required: ['id', 'secret', 'previousSecretValidUntil'],
      properties: {
        id: { type: 'string' },
        secret: { type: 'string', description: 'The new signing secret.' },
        previousSecretValidUntil: {
          type: 'string',
          format: 'date-time',
          description: 'Until then deliveries carry a signature by each secret.',
        },
      },
      additionalProperties: false,
    },
    WebhookDeliveryList: {
      type: 'object',
      required: ['data'],
      properties: { data: { type: 'array', items: ref('schemas', 'WebhookDelivery') } },
      additionalProperties: false,
    },
    WebhookDeliveryRetry: {
      type: 'object',
      required: ['id', 'state'],
      properties: { id: { type: 'integer' }, state: { type: 'string', enum: ['pending'] } },
      additionalProperties: false,
    },
    ...deliverySchemas(),
  };
};

/**
 * `/webhook-endpoints`: each caller registers and manages its own receivers (served when `events.webhooks` is set).
 * Writes run through the idempotency layer like every unsafe request.
 */
export const webhookEndpointsApi = (plan: Plan): BuiltInApi => {
  if (plan.events.types.length === 0 || plan.events.webhooks === undefined) return { operations: [], schemas: {} };
  const events = plan.events.webhooks.events ?? plan.events.types;
  const base = `${plan.service.basePath}/webhook-endpoints`;
  const kind = { action: 'webhooks', builtIn: 'api' } as const;
  const errors = (...codes: string[]) => errorResponses(plan.errors, [...codes, ...ALWAYS]);
  const write = [...IDEMPOTENCY];
  const id = {
    name: 'id',
    in: 'path',
    required: true,
    description: 'The webhook endpoint id; another caller’s is 404.',
    schema: { type: 'string', examples: [EXAMPLE_ID] },
  };
  const requestId = ref('parameters', 'RequestId');
  const idempotent = [ref('parameters', 'IdempotencyKey'), requestId];
  const endpoint = {
    id: EXAMPLE_ID,
    url: 'https://example.com/hooks',
    events: [],
    createdAt: EXAMPLE_TIME,
    disabled: false,
  };
  const op = (method: 'get' | 'post' | 'patch' | 'delete', path: string, operation: OpenApiObject) => ({
    method,
    path: `${base}${path}`,
    kind,
    operation: { tags: TAGS, ...operation },
  });
  return {
    schemas: schemas(events, plan.versioning?.ids),
    operations: [
      op('post', '', {
        operationId: 'createWebhookEndpoint',
        summary: 'Register a webhook endpoint',
        description: 'Events from now on that its owner may read are sent to `url`, signed the Standard Webhooks way.',
        parameters: idempotent,
        requestBody: jsonBody(ref('schemas', 'WebhookEndpointCreate'), { url: 'https://example.com/hooks' }),
        responses: {
          '201': success(
            'The endpoint, with its secret.',
            ref('schemas', 'WebhookEndpointCreated'),
            {
              ...endpoint,
              secret: EXAMPLE_SECRET,
            },
            ['Location', 'Idempotent-Replayed'],
          ),
          ...errors(...BODY, ...write, 'invalid_webhook_url'),
        },
      }),
      op('get', '', {
        operationId: 'listWebhookEndpoints',
        summary: 'List your webhook endpoints',
        parameters: [requestId],
        responses: {
          '200': success('Your endpoints.', ref('schemas', 'WebhookEndpointList'), { data: [endpoint] }),
          ...errors(),
        },
      }),
      op('get', '/{id}', {
        operationId: 'getWebhookEndpoint',
        summary: 'Get a webhook endpoint',
        parameters: [id, requestId],
        responses: {
          '200': success('The endpoint.', ref('schemas', 'WebhookEndpoint'), endpoint),
          ...errors('not_found'),
        },
      }),
      op('patch', '/{id}', {
        operationId: 'updateWebhookEndpoint',
        summary: 'Update a webhook endpoint',
        parameters: [id, ...idempotent],
        requestBody: jsonBody(ref('schemas', 'WebhookEndpointPatch'), { disabled: false }),
        responses: {
          '200': success('The endpoint.', ref('schemas', 'WebhookEndpoint'), endpoint, ['Idempotent-Replayed']),
          ...errors('not_found', ...BODY, ...write, 'invalid_webhook_url'),
        },
      }),
      op('delete', '/{id}', {
        operationId: 'deleteWebhookEndpoint',
        summary: 'Delete a webhook endpoint',
        parameters: [id, ...idempotent],
        responses: {
          '204': success('Deleted.', undefined, undefined, ['Idempotent-Replayed']),
          ...errors('not_found', ...write),
        },
      }),
      op('post', '/{id}/rotate-secret', {
        operationId: 'rotateWebhookSecret',
        summary: 'Rotate a webhook endpoint’s secret',
        description: 'For 24 hours deliveries carry two signatures, by the old secret and the new.',
        parameters: [id, ...idempotent],
        responses: {
          '200': success(
            'The new secret.',
            ref('schemas', 'WebhookSecret'),
            {
              id: EXAMPLE_ID,
              secret: EXAMPLE_SECRET,
              previousSecretValidUntil: EXAMPLE_TIME,
            },
            ['Idempotent-Replayed'],
          ),
          ...errors('not_found', ...write),
        },
      }),
      op('get', '/{id}/deliveries', {
        operationId: 'listWebhookDeliveries',
        summary: 'List a webhook endpoint’s deliveries',
        description: 'The last 100 deliveries, newest first, with every attempt.',
        parameters: [id, requestId],
        responses: {
          '200': success('The deliveries.', ref('schemas', 'WebhookDeliveryList'), { data: [] }),
          ...errors('not_found'),
        },
      }),
      op('post', '/{id}/deliveries/{delivery}/retry', {
        operationId: 'retryWebhookDelivery',
        summary: 'Send a delivery again',
        parameters: [
          id,
          {
            name: 'delivery',
            in: 'path',
            required: true,
            description: 'The delivery id.',
            schema: { type: 'integer', examples: [1] },
          },
          ...idempotent,
        ],
        responses: {
          '202': success(
            'The delivery is pending again.',
            ref('schemas', 'WebhookDeliveryRetry'),
            {
              id: 1,
              state: 'pending',
            },
            ['Idempotent-Replayed'],
          ),
          ...errors('not_found', 'conflict', ...write),
        },
      }),
    ],
  };
};
