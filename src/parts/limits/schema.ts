import { Type } from '@sinclair/typebox';
import { stringEnum } from '../../spec/string-enum.ts';

const Rate = Type.String({ description: 'N/unit: 100/min, 10/s, 5000/h, 1000/day.' });

/** Part 8 — rate limits, quotas, sizes and time-outs. */
export const LimitsSchema = Type.Object(
  {
    rate: Type.Optional(
      Type.Object(
        {
          default: Type.Optional(Rate),
          by: Type.Optional(stringEnum(['principal', 'ip'] as const)),
          endpoints: Type.Optional(
            Type.Record(Type.String(), Rate, {
              description: 'Per route or operation: "POST /orders": 10/s, Order.place: 5/min, customerSummary: 1/s.',
            }),
          ),
          roles: Type.Optional(
            Type.Record(Type.String(), Rate, {
              description:
                'The default for callers with a role (the highest of theirs wins); anonymous: callers without credentials.',
            }),
          ),
          authFailures: Type.Optional(Rate),
        },
        { additionalProperties: false },
      ),
    ),
    quotas: Type.Optional(
      Type.Record(Type.String(), Rate, {
        description: '"Order.create": "1000/day": successful calls per caller per calendar period (UTC).',
      }),
    ),
    trustProxy: Type.Optional(
      Type.Array(Type.String(), {
        description: 'Proxies whose X-Forwarded-For / Forwarded is believed: addresses or CIDRs (10.0.0.0/8).',
      }),
    ),
    store: Type.Optional(
      Type.String({
        description: 'Where rate counters live: redis://host:port (shared by instances); in process by default.',
      }),
    ),
    onStoreFailure: Type.Optional(
      stringEnum(
        ['open', 'closed'] as const,
        'When the counter store fails: open (serve, unlimited, with a warning) or closed (503).',
      ),
    ),
    size: Type.Optional(
      Type.Object(
        {
          body: Type.Optional(Type.String({ description: '1mb, 512kb, 100b' })),
          pageSize: Type.Optional(Type.Integer({ minimum: 1 })),
          depth: Type.Optional(Type.Integer({ minimum: 1, maximum: 256 })),
          endpoints: Type.Optional(Type.Record(Type.String(), Type.String())),
        },
        { additionalProperties: false },
      ),
    ),
    timeouts: Type.Optional(
      Type.Object(
        {
          request: Type.Optional(Type.String({ description: '10s or PT10S' })),
          headers: Type.Optional(Type.String()),
          endpoints: Type.Optional(Type.Record(Type.String(), Type.String())),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false, description: 'Part 8: limits.' },
);
