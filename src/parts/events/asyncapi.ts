import type { Plan } from '../../plan/types.ts';
import { formatDuration } from '../../spec/units.ts';
import { streamSecurity } from '../auth/asyncapi.ts';
import type { OpenApiObject } from '../openapi-model.ts';
import type { EventDoc } from './event-schemas.ts';

/** The sections of an AsyncAPI 3.0 document the events part contributes. */
export interface AsyncApiEvents {
  servers: Record<string, OpenApiObject>;
  channels: Record<string, OpenApiObject>;
  operations: Record<string, OpenApiObject>;
  messages: Record<string, OpenApiObject>;
  schemas: Record<string, OpenApiObject>;
  /** The schemes the stream server's `security` refers to. */
  securitySchemes: Record<string, OpenApiObject>;
}

const streamPath = (plan: Plan): string => `${plan.service.basePath}${plan.events.stream.path}`;

/** The server-sent event stream, the one place a client connects to for events. */
const streamServer = (plan: Plan): OpenApiObject => ({
  host: '{host}',
  protocol: 'http',
  pathname: streamPath(plan),
  title: 'Event stream',
  description: [
    `Server-sent events (\`text/event-stream\`) at \`GET ${streamPath(plan)}\`, with the credentials the API asks for.`,
    'Each event arrives as `id:` its id, `event:` its type and `data:` its JSON; `?type=A,B` keeps only those types.',
    'A client that reconnects with `Last-Event-ID` gets every event after that one, with no gap;',
    `a comment line every ${formatDuration(plan.events.stream.heartbeatMs)} keeps the connection alive.`,
  ].join(' '),
  variables: {
    host: {
      default: '127.0.0.1:3000',
      description: 'Where the service listens (`ninefold serve` defaults to 127.0.0.1:3000).',
    },
  },
});

/** The delivery guarantees and the three ways events reach a listener, for the document's description. */
export const deliveryNotes = (plan: Plan): string => {
  const webhooks = plan.events.webhooks !== undefined;
  const callbacks = [...plan.events.callbacks];
  return [
    '## Delivery',
    '',
    'Each event is written in the transaction of the change it reports: an event exists exactly when its change committed.',
    '',
    '- **At least once.** An event may arrive more than once (a retried webhook, a resumed stream); every copy keeps the event `id`, so a listener drops ids it has already handled.',
    '- **Order.** The event log and the stream are in commit order; webhook deliveries may arrive out of order (several at once per endpoint, retries): order by `time`, or read the record.',
    `- **Stream.** \`GET ${streamPath(plan)}\`: server-sent events, resumable with \`Last-Event-ID\` (the \`stream\` server).`,
    ...(webhooks
      ? [
          `- **Webhooks.** \`POST ${plan.service.basePath}/webhook-endpoints\` registers a receiver, sent each event it subscribes to as a POST signed the Standard Webhooks way (\`webhook-id\`, \`webhook-timestamp\`, \`webhook-signature\`); the OpenAPI document describes these requests under \`webhooks\`.`,
        ]
      : []),
    ...callbacks.map(
      ([resource, c]) =>
        `- **Callbacks.** The URL in a ${resource}'s \`${c.field}\` field is sent ${c.events.map((e) => `\`${e}\``).join(', ')} about that ${resource}.`,
    ),
  ].join('\n');
};

/** One channel (address: the event type), message and `send` operation per event, and the stream server. */
export const eventChannels = (plan: Plan, events: readonly EventDoc[]): AsyncApiEvents => {
  const out: AsyncApiEvents = {
    servers: {},
    channels: {},
    operations: {},
    messages: {},
    schemas: {},
    securitySchemes: {},
  };
  if (!events.length) return out;
  const security = streamSecurity(plan);
  const server = streamServer(plan);
  out.servers.stream = security
    ? {
        ...server,
        security: security.security,
        ...(security.note ? { description: `${String(server.description)} Credentials: ${security.note}` } : {}),
      }
    : server;
  if (security) out.securitySchemes = security.schemes;
  for (const e of events) {
    const about = { summary: e.summary, ...(e.description ? { description: e.description } : {}) };
    out.schemas[e.schemaName] = e.schema;
    out.messages[e.key] = {
      name: e.type,
      title: e.type,
      ...about,
      contentType: 'application/json',
      payload: { $ref: `#/components/schemas/${e.schemaName}` },
      examples: [{ name: e.words, payload: e.example }],
    };
    out.channels[e.key] = {
      address: e.type,
      title: e.type,
      ...about,
      messages: { [e.key]: { $ref: `#/components/messages/${e.key}` } },
    };
    out.operations[`send${e.words}`] = {
      action: 'send',
      channel: { $ref: `#/channels/${e.key}` },
      summary: `The service sends ${e.type}.`,
      messages: [{ $ref: `#/channels/${e.key}/messages/${e.key}` }],
    };
  }
  return out;
};
