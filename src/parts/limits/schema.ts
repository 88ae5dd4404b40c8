import { Type } from '@sinclair/typebox';
import { stringEnum } from '../../spec/string-enum.ts';

const Rate = Type.String({ description: 'N/unit: 100/min, 10/s, 5000/h, 1000/day.' });
const Size = (description: string) => Type.String({ description: `${description} A size: 1mb, 512kb, 100b.` });
const Duration = (description: string) => Type.String({ description: `${description} A duration: 10s, 500ms, PT10S.` });
/** Per-route values, keyed "METHOD /path" as the spec declares the route. */
const PerRoute = (value: ReturnType<typeof Type.String>, example: string) =>
  Type.Record(Type.String(), value, { description: example });

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
          body: Type.Optional(Size('Largest request body (default 1mb): 413 payload_too_large.')),
          pageSize: Type.Optional(Type.Integer({ minimum: 1 })),
          depth: Type.Optional(Type.Integer({ minimum: 1, maximum: 256 })),
          items: Type.Optional(
            Type.Integer({
              minimum: 1,
              description: 'Most items any array of a request body may hold (default 10000): 400 too_many_items.',
            }),
          ),
          url: Type.Optional(Size('Longest request target, path and query (default 8kb): 414 uri_too_long.')),
          headers: Type.Optional(
            Size('Largest request line and headers together (default 16kb): 431 request_header_fields_too_large.'),
          ),
          endpoints: Type.Optional(PerRoute(Size('Body limit of one route.'), '"POST /imports": "10mb"')),
        },
        { additionalProperties: false },
      ),
    ),
    timeouts: Type.Optional(
      Type.Object(
        {
          request: Type.Optional(Duration('Time budget of a request once received (default 30s): 503 timeout.')),
          headers: Type.Optional(Duration('Time to receive the request line and headers (default 20s): 408.')),
          body: Type.Optional(Duration('Time to receive the whole request, body included (default 30s): 408.')),
          endpoints: Type.Optional(PerRoute(Duration('Time budget of one route.'), '"POST /reports": "2min"')),
        },
        { additionalProperties: false },
      ),
    ),
    overload: Type.Optional(
      Type.Object(
        {
          lag: Duration('Event-loop lag past which new requests are shed with 503 overloaded (e.g. 200ms).'),
          retryAfter: Type.Optional(Duration('Retry-After of a shed request (default 2s).')),
          critical: Type.Optional(
            Type.Array(Type.String(), {
              description: 'Routes ("GET /orders/{id}") still served while overloaded, up to `reserve` at once.',
            }),
          ),
          reserve: Type.Optional(
            Type.Integer({
              minimum: 1,
              description:
                'Requests the critical routes may have in flight at once while overloaded (default 16): their share of the process; past it they are shed too.',
            }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false, description: 'Part 8: limits.' },
);
