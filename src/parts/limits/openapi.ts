import type { Plan } from '../../plan/types.ts';
import { documentedCodes, routeKinds } from '../auth/openapi.ts';
import type { RouteKind } from '../auth/route-access.ts';
import { ALWAYS, errorMediaType, errorResponses, errorSchemaName } from '../errors/openapi.ts';
import type { BuiltInApi, BuiltInOperation, OpenApiObject } from '../openapi-model.ts';
import { ref, success } from '../openapi-model.ts';
import { formatRate } from './docs.ts';
import { type NamedPolicy, policyItem } from './rate-headers.ts';
import { allGeneral, endpointPolicy, limitable } from './rate-step.ts';

const USAGE_EXAMPLE = {
  subject: 'alice',
  quotas: [
    {
      operation: 'Order.create',
      quota: '1000 per day',
      limit: 1000,
      used: 42,
      remaining: 958,
      periodStart: '2026-01-15T00:00:00.000Z',
      resetAt: '2026-01-16T00:00:00.000Z',
    },
  ],
};

/** The RateLimit fields (draft-ietf-httpapi-ratelimit-headers-11) and Retry-After, as shared headers. */
export const limitHeaders = (): Record<string, OpenApiObject> => ({
  RateLimit: {
    description:
      'Where the caller stands in each policy: `r` requests left now, `t` seconds until the whole quota is back (draft-ietf-httpapi-ratelimit-headers-11).',
    schema: { type: 'string', examples: ['"default";r=42;t=17'] },
  },
  'RateLimit-Policy': {
    description: 'The policies this request counts against: `q` requests per `w` seconds.',
    schema: { type: 'string', examples: ['"default";q=100;w=60'] },
  },
  'Retry-After': {
    description: 'Seconds to wait before the request would be accepted.',
    schema: { type: 'string', examples: ['12'] },
  },
});

/** The quota usage API, `/_ninefold/usage`: served when the spec declares quotas. */
export const usageApi = (plan: Plan): BuiltInApi => {
  if (plan.limits.quotas.size === 0) return { operations: [], schemas: {} };
  const path = `${plan.service.basePath}/_ninefold/usage`;
  const tags = ['Limits'];
  const requestId = ref('parameters', 'RequestId');
  const operations: BuiltInOperation[] = [
    {
      method: 'get',
      path,
      kind: { action: 'usage', builtIn: 'api' },
      operation: {
        operationId: 'getQuotaUsage',
        summary: 'Read quota usage',
        description: 'The caller’s use of each quota in the running period; `subject` reads another’s (admin role).',
        tags,
        parameters: [
          { name: 'subject', in: 'query', description: 'Whose usage (admin role).', schema: { type: 'string' } },
          requestId,
        ],
        responses: {
          '200': success('Usage per quota.', ref('schemas', 'QuotaUsage'), USAGE_EXAMPLE),
          ...errorResponses(plan.errors, ['forbidden', ...ALWAYS]),
        },
      },
    },
  ];
  if (plan.auth.schemes.size > 0)
    operations.push({
      method: 'delete',
      path: `${path}/{subject}`,
      kind: { action: 'usage', builtIn: 'admin' },
      operation: {
        operationId: 'resetQuotaUsage',
        summary: 'Reset quota usage',
        description: 'The subject’s quotas start again at 0 in the running period.',
        tags,
        parameters: [{ name: 'subject', in: 'path', required: true, schema: { type: 'string' } }, requestId],
        responses: { '204': { description: 'Reset.' }, ...errorResponses(plan.errors, ALWAYS) },
      },
    });
  const quota = {
    type: 'object',
    required: ['operation', 'quota', 'limit', 'used', 'remaining', 'periodStart', 'resetAt'],
    properties: {
      operation: { type: 'string' },
      quota: { type: 'string', description: 'The quota in words.' },
      limit: { type: 'integer' },
      used: { type: 'integer' },
      remaining: { type: 'integer' },
      periodStart: { type: 'string', format: 'date-time' },
      resetAt: { type: 'string', format: 'date-time' },
    },
    additionalProperties: false,
  };
  return {
    operations,
    schemas: {
      QuotaUsage: {
        type: 'object',
        required: ['subject', 'quotas'],
        properties: { subject: { type: 'string' }, quotas: { type: 'array', items: quota } },
        additionalProperties: false,
      },
    },
  };
};

const operationOf = (kind: RouteKind) =>
  kind.custom ? kind.action : kind.resource ? `${kind.resource}.${kind.action}` : '';

/** The policies a route counts against: the general ones (by role) and its own, then its quota. */
const policiesOf = (plan: Plan, method: string, path: string, kind: RouteKind) => {
  const rate = plan.limits.rate;
  const base = plan.service.basePath;
  const operation = operationOf(kind);
  const rates: NamedPolicy[] = [];
  if (rate && limitable({ kind })) {
    rates.push(...allGeneral(rate));
    const own = endpointPolicy(rate, {
      operation,
      method: method.toUpperCase(),
      ...(path.startsWith(base) && !kind.builtIn ? { path: path.slice(base.length) } : {}),
    });
    if (own) rates.push(own);
  }
  const quota = plan.limits.quotas.get(operation);
  return { rates, quota: quota && kind.resource ? { name: operation, rate: quota } : undefined };
};

/**
 * Every limited operation answers 429 (`rate_limited`, `quota_exceeded`) with Retry-After and the RateLimit
 * fields, and its other answers carry the RateLimit fields too; its description states the limits in words.
 */
export const applyLimits = (
  plan: Plan,
  paths: Record<string, OpenApiObject>,
  builtIns: readonly BuiltInOperation[],
) => {
  for (const { method, path, kind } of routeKinds(plan, builtIns)) {
    const op = (paths[path] as Record<string, OpenApiObject> | undefined)?.[method] as OpenApiObject | undefined;
    if (!op) continue;
    const { rates, quota } = policiesOf(plan, method, path, kind);
    if (rates.length === 0 && !quota) continue;
    const words = [...rates, ...(quota ? [quota] : [])].map((p) =>
      p === quota
        ? `quota ${p.name}: ${formatRate(p.rate)} (calendar period, UTC)`
        : `${p.name}: ${formatRate(p.rate)}`,
    );
    const policy = [...rates, ...(quota ? [quota] : [])].map(policyItem).join(', ');
    op.description = `${op.description ? `${op.description}\n\n` : ''}Limits: ${words.join('; ')}. RateLimit-Policy: \`${policy}\`.`;
    const responses = (op.responses ?? {}) as Record<string, OpenApiObject>;
    for (const [status, response] of Object.entries(responses))
      if (Number(status) < 400 && response.headers)
        response.headers = {
          ...(response.headers as OpenApiObject),
          RateLimit: ref('headers', 'RateLimit'),
          'RateLimit-Policy': ref('headers', 'RateLimit-Policy'),
        };
    const codes = [...(rates.length ? ['rate_limited'] : []), ...(quota ? ['quota_exceeded'] : [])];
    responses['429'] = {
      description: codes.map((c) => `\`${c}\`: ${plan.errors.catalogue.get(c)?.title ?? c}`).join('; '),
      headers: {
        'X-Request-Id': ref('headers', 'X-Request-Id'),
        'Retry-After': ref('headers', 'Retry-After'),
        RateLimit: ref('headers', 'RateLimit'),
        'RateLimit-Policy': ref('headers', 'RateLimit-Policy'),
      },
      content: {
        [errorMediaType(plan.errors)]: {
          schema: ref('schemas', errorSchemaName(plan.errors)),
          examples: Object.fromEntries(codes.map((c) => [c, ref('examples', c)])),
        },
      },
    };
    if (rates.length && plan.limits.onStoreFailure === 'closed') {
      const before = responses['503'] ? documentedCodes({ '503': responses['503'] }) : [];
      const merged = errorResponses(plan.errors, [...before, 'limits_unavailable']);
      if (merged['503']) responses['503'] = merged['503'];
    }
    op.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));
  }
};
