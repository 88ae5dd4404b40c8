import { Type } from '@sinclair/typebox';
import { namedRecord } from '../../spec/named-record.ts';
import { FieldsSchema } from '../resources/field-schema.ts';

export const DeclaredEventSchema = Type.Object(
  {
    description: Type.Optional(Type.String()),
    payload: Type.Optional(FieldsSchema),
    roles: Type.Optional(
      Type.Array(Type.String(), {
        description:
          'Who sees it on the event log, the stream and webhooks: callers with one of these roles (default everyone).',
      }),
    ),
  },
  { additionalProperties: false },
);

export const WebhooksSchema = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean()),
    signing: Type.Optional(Type.Literal('standard-webhooks')),
    retry: Type.Optional(Type.Array(Type.String(), { description: 'Delays between attempts: 5s, 5m, 30m, 2h…' })),
    timeout: Type.Optional(Type.String({ description: 'Receiver timeout (default 15s, at most 30s).' })),
    disableAfter: Type.Optional(Type.String({ description: 'Disable an endpoint failing this long (default 5d).' })),
    allowPrivateTargets: Type.Optional(Type.Boolean({ description: 'Allow loopback/private receivers (tests only).' })),
    events: Type.Optional(Type.Array(Type.String(), { description: 'Events offered to webhooks (default all).' })),
  },
  { additionalProperties: false },
);

export const CallbackSchema = Type.Object(
  { field: Type.String({ description: 'The field holding the callback URL.' }), events: Type.Array(Type.String()) },
  { additionalProperties: false },
);

/** Part 6 — events, webhooks, callbacks and the stream. */
export const EventsSchema = Type.Object(
  {
    auto: Type.Optional(
      Type.Union([Type.Boolean(), Type.Array(Type.String())], {
        description: 'Emit created/updated/deleted and transition events (true, or a list of resources).',
      }),
    ),
    declared: Type.Optional(namedRecord('^[A-Za-z][A-Za-z0-9]*(\\.[A-Za-z][A-Za-z0-9_]*)+$', DeclaredEventSchema)),
    webhooks: Type.Optional(WebhooksSchema),
    callbacks: Type.Optional(Type.Record(Type.String(), CallbackSchema, { description: 'Resource → callback field.' })),
    stream: Type.Optional(
      Type.Object(
        {
          path: Type.Optional(Type.String({ pattern: '^/' })),
          heartbeat: Type.Optional(
            Type.String({ description: 'A comment line this often (default 15s; held between 100ms and 24h).' }),
          ),
          recheck: Type.Optional(
            Type.String({
              description:
                "The caller's credentials are checked again this often (default 60s; held between 100ms and 24h).",
            }),
          ),
          maxPerCaller: Type.Optional(
            Type.Integer({ minimum: 1, description: 'Streams one caller may hold open at once (default 5).' }),
          ),
          maxOpen: Type.Optional(
            Type.Integer({ minimum: 1, description: 'Streams the process holds open at once (default 1000).' }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false, description: 'Part 6: events, notifications and callbacks.' },
);
