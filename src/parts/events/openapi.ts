import type { Plan } from '../../plan/types.ts';
import { type OpenApiObject, ref } from '../openapi-model.ts';
import { type EventDoc, eventRecordComponent, eventRecordName } from './event-schemas.ts';

/** The Standard Webhooks headers of every delivery (https://www.standardwebhooks.com). */
const webhookParameters = (): Record<string, OpenApiObject> => ({
  WebhookId: {
    name: 'webhook-id',
    in: 'header',
    required: true,
    description: 'The event id, the same on every attempt: a receiver drops ids it has already handled.',
    schema: { type: 'string' },
  },
  WebhookTimestamp: {
    name: 'webhook-timestamp',
    in: 'header',
    required: true,
    description: 'When this attempt was signed, in seconds since the Unix epoch; refuse one far from now (replay).',
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  WebhookSignature: {
    name: 'webhook-signature',
    in: 'header',
    required: true,
    description:
      '`v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`, keyed with the endpoint secret ' +
      '(the base64 after `whsec_`). Two, separated by a space, while a rotated secret still signs.',
    schema: { type: 'string' },
  },
});

/** Who is sent each event as a POST: subscribed webhook endpoints (those offered) and callback URL fields. */
const receiversByType = (plan: Plan, events: readonly EventDoc[]): Map<string, string[]> => {
  const out = new Map<string, string[]>();
  const add = (type: string, receiver: string) => out.set(type, [...(out.get(type) ?? []), receiver]);
  const webhooks = plan.events.webhooks;
  if (webhooks)
    for (const { type } of events)
      if (!webhooks.events || webhooks.events.includes(type))
        add(type, `the webhook endpoints subscribed to it (\`POST ${plan.service.basePath}/webhook-endpoints\`)`);
  for (const [resource, callback] of plan.events.callbacks)
    for (const type of callback.events) add(type, `the URL in the \`${callback.field}\` field of its ${resource}`);
  return out;
};

/** What the events part adds to the OpenAPI document. */
export interface EventWebhooks {
  webhooks: Record<string, OpenApiObject>;
  schemas: Record<string, OpenApiObject>;
  parameters: Record<string, OpenApiObject>;
}

/**
 * The OpenAPI `webhooks`: one POST per event the service pushes, its body the event JSON, with the event
 * schemas and the Standard Webhooks header parameters they need. Undefined when nothing is pushed.
 */
export const eventWebhooks = (plan: Plan, events: readonly EventDoc[]): EventWebhooks | undefined => {
  const receivers = receiversByType(plan, events);
  const pushed = events.filter((e) => receivers.has(e.type));
  if (!pushed.length) return undefined;
  const parameters = webhookParameters();
  const webhooks: Record<string, OpenApiObject> = {};
  for (const e of pushed)
    webhooks[e.type] = {
      post: {
        operationId: `on${e.words}`,
        // The service calls the receiver: no credentials of the API; the receiver checks the signature instead.
        security: [],
        summary: e.summary,
        description: [
          e.description,
          `Sent to ${(receivers.get(e.type) ?? []).join(' and ')}.`,
          'At least once: a retry keeps the `webhook-id`.',
        ]
          .filter(Boolean)
          .join(' '),
        parameters: Object.keys(parameters).map((name) => ref('parameters', name)),
        requestBody: {
          required: true,
          content: { 'application/json': { schema: ref('schemas', e.schemaName), example: e.example } },
        },
        responses: {
          '200': { description: 'Accepted. Any 2xx answer delivers the event.' },
          '410': { description: 'Gone: the webhook endpoint is disabled and sent nothing more.' },
          default: { description: 'Anything else, or no answer in time, is retried later with the same event.' },
        },
      },
    };
  const records = new Set(pushed.flatMap((e) => e.resources));
  const schemas = {
    ...Object.fromEntries([...records].map((r) => [eventRecordName(r), eventRecordComponent(r, plan.resourcesByName)])),
    ...Object.fromEntries(pushed.map((e) => [e.schemaName, e.schema])),
  };
  return { webhooks, schemas, parameters };
};
