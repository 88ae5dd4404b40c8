import type { Plan } from '../../plan/types.ts';
import { ALWAYS, errorResponses } from '../errors/openapi.ts';
import { type BuiltInApi, type BuiltInOperation, type OpenApiObject, ref, success } from '../openapi-model.ts';
import { exampleId } from '../resources/example.ts';

const EXAMPLE_TIME = '2026-01-15T09:30:00.000Z';
const TAGS = ['Events'];

/** An event as `GET /events` shows it: the envelope of every event type, its `data` as the type says. */
const eventSchema = (plan: Plan): OpenApiObject => ({
  type: 'object',
  description: 'An event: `data` is as the event type describes (the AsyncAPI document has one schema per type).',
  required: ['id', 'type', 'time', 'data'],
  properties: {
    id: { type: 'string', description: 'The event id (`evt_` and a ULID): ids sort by time.' },
    type: { type: 'string', enum: [...plan.events.types] },
    time: { type: 'string', format: 'date-time', description: 'When the change was made.' },
    data: { type: 'object', additionalProperties: true },
  },
  additionalProperties: false,
});

const exampleEvent = (plan: Plan) => ({
  id: exampleId({ idPrefix: 'evt' }),
  type: plan.events.types[0] ?? 'Example.created',
  time: EXAMPLE_TIME,
  data: {},
});

const typeParameter = (plan: Plan): OpenApiObject => ({
  name: 'type',
  in: 'query',
  description: 'Only events of these types, comma-separated.',
  schema: { type: 'string', examples: [plan.events.types.slice(0, 2).join(',')] },
});

/** `GET /events`, `GET /events/{id}` and the server-sent event stream: served whenever the service has events. */
export const eventLogApi = (plan: Plan): BuiltInApi => {
  if (plan.events.types.length === 0) return { operations: [], schemas: {} };
  const base = plan.service.basePath;
  const kind = { action: 'events', builtIn: 'api' } as const;
  const errors = (...codes: string[]) => errorResponses(plan.errors, [...codes, ...ALWAYS]);
  const operations: BuiltInOperation[] = [
    {
      method: 'get',
      path: `${base}/events`,
      kind,
      operation: {
        operationId: 'listEvents',
        summary: 'List events',
        description:
          'The event log in commit order, oldest first; each caller sees the events about records it may read.',
        tags: TAGS,
        parameters: [
          typeParameter(plan),
          {
            name: 'since',
            in: 'query',
            description: 'Only events from this time on.',
            schema: { type: 'string', format: 'date-time' },
          },
          {
            name: 'limit',
            in: 'query',
            description: 'Page size (at most 100).',
            schema: { type: 'integer', minimum: 1, maximum: 100, default: 50 },
          },
          {
            name: 'cursor',
            in: 'query',
            description: 'The `nextCursor` of the previous page.',
            schema: { type: 'string' },
          },
          ref('parameters', 'RequestId'),
        ],
        responses: {
          '200': success('A page of events.', ref('schemas', 'EventPage'), {
            data: [exampleEvent(plan)],
            nextCursor: null,
          }),
          ...errors('invalid_query', 'invalid_filter', 'invalid_cursor', 'limit_exceeded'),
        },
      },
    },
    {
      method: 'get',
      path: `${base}/events/{id}`,
      kind,
      operation: {
        operationId: 'getEvent',
        summary: 'Get an event',
        tags: TAGS,
        parameters: [
          {
            name: 'id',
            in: 'path',
            required: true,
            description: 'The event id.',
            schema: { type: 'string', examples: [exampleId({ idPrefix: 'evt' })] },
          },
          ref('parameters', 'RequestId'),
        ],
        responses: {
          '200': success('The event.', ref('schemas', 'Event'), exampleEvent(plan)),
          ...errors('not_found'),
        },
      },
    },
    {
      method: 'get',
      path: `${base}${plan.events.stream.path}`,
      kind: { action: 'events.stream', builtIn: 'api' },
      operation: {
        operationId: 'streamEvents',
        summary: 'Stream events (server-sent events)',
        description:
          'Each event as `id:`, `event:` (its type) and `data:` (its JSON, as `Event`), from now on or after the event ' +
          'named by `Last-Event-ID`; a comment line keeps the connection alive. The AsyncAPI document describes each type.',
        tags: TAGS,
        parameters: [
          typeParameter(plan),
          {
            name: 'Last-Event-ID',
            in: 'header',
            description: 'Resume after this event: every event after it arrives, with no gap.',
            schema: { type: 'string' },
          },
          {
            name: 'lastEventId',
            in: 'query',
            description: 'The same as `Last-Event-ID`, for clients that cannot set headers (EventSource).',
            schema: { type: 'string' },
          },
          ref('parameters', 'RequestId'),
        ],
        responses: {
          '200': {
            description: 'An open stream of events.',
            headers: { 'X-Request-Id': ref('headers', 'X-Request-Id') },
            content: {
              'text/event-stream': {
                schema: { type: 'string' },
                example: `id: ${exampleId({ idPrefix: 'evt' })}\nevent: ${exampleEvent(plan).type}\ndata: {}\n\n`,
              },
            },
          },
          ...errors('invalid_query', 'invalid_filter', 'too_many_streams'),
        },
      },
    },
  ];
  return {
    operations,
    schemas: {
      Event: { ...eventSchema(plan), examples: [exampleEvent(plan)] },
      EventPage: {
        type: 'object',
        description: 'One page of the event log.',
        required: ['data', 'nextCursor'],
        properties: {
          data: { type: 'array', items: ref('schemas', 'Event') },
          nextCursor: { type: ['string', 'null'], description: 'Pass as `cursor` for the next page; null at the end.' },
        },
        additionalProperties: false,
      },
    },
  };
};

const DELIVERY: OpenApiObject = {
  type: 'object',
  description: 'One event on its way to one receiver, with every attempt made.',
  required: ['id', 'endpointId', 'eventId', 'eventSeq', 'state', 'attempts', 'createdAt', 'log'],
  properties: {
    id: { type: 'integer' },
    endpointId: { type: 'string' },
    eventId: { type: 'string' },
    eventSeq: { type: 'integer' },
    url: { type: 'string', description: 'The receiver of a callback, as the record named it then.' },
    state: { type: 'string', enum: ['pending', 'delivered', 'failed'] },
    attempts: { type: 'integer', minimum: 0 },
    nextAt: { type: 'string', format: 'date-time', description: 'When the next attempt is due (pending only).' },
    createdAt: { type: 'string', format: 'date-time' },
    log: {
      type: 'array',
      items: {
        type: 'object',
        required: ['at', 'durationMs'],
        properties: {
          at: { type: 'string', format: 'date-time' },
          status: { type: 'integer', description: 'The receiver’s HTTP status, when it answered.' },
          durationMs: { type: 'integer', minimum: 0 },
          error: { type: 'string', description: 'Why the attempt failed, when the receiver did not answer.' },
        },
        additionalProperties: false,
      },
    },
  },
  additionalProperties: false,
};

/** The schema of a delivery and its attempts, shared by webhook endpoints and callbacks. */
export const deliverySchemas = (): Record<string, OpenApiObject> => ({ WebhookDelivery: DELIVERY });

/** `GET /_ninefold/callbacks`: served when a resource has callbacks and the service has schemes (an admin to ask). */
export const callbackAdminApi = (plan: Plan): BuiltInApi => {
  if (plan.events.types.length === 0 || plan.events.callbacks.size === 0 || plan.auth.schemes.size === 0)
    return { operations: [], schemas: {} };
  return {
    operations: [
      {
        method: 'get',
        path: `${plan.service.basePath}/_ninefold/callbacks`,
        kind: { action: 'callbacks', builtIn: 'admin' },
        operation: {
          operationId: 'listCallbacks',
          summary: 'List callbacks and their deliveries',
          description: 'Per resource: the callback field, its events, the signing secret and the last 100 deliveries.',
          tags: ['Admin'],
          parameters: [ref('parameters', 'RequestId')],
          responses: {
            '200': success('The callbacks.', ref('schemas', 'CallbackList'), { data: [] }),
            ...errorResponses(plan.errors, ALWAYS),
          },
        },
      },
    ],
    schemas: {
      ...deliverySchemas(),
      CallbackList: {
        type: 'object',
        required: ['data'],
        properties: {
          data: {
            type: 'array',
            items: {
              type: 'object',
              required: ['resource', 'field', 'events', 'secret', 'deliveries'],
              properties: {
                resource: { type: 'string' },
                field: { type: 'string' },
                events: { type: 'array', items: { type: 'string' } },
                secret: { type: ['string', 'null'], description: 'The signing secret (`whsec_…`) to give receivers.' },
                deliveries: { type: 'array', items: ref('schemas', 'WebhookDelivery') },
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
