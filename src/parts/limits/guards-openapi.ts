import type { Plan } from '../../plan/types.ts';
import { errorResponses } from '../errors/openapi.ts';
import type { OpenApiObject } from '../openapi-model.ts';

const METHODS = new Set(['get', 'put', 'post', 'patch', 'delete']);
const HEALTH = new Set(['/healthz', '/readyz']);

/** The catalogue codes an answer already documents: its $ref, or the examples of a shared response. */
const codesOf = (response: OpenApiObject): string[] => {
  const ref = response.$ref;
  if (typeof ref === 'string') return [ref.slice(ref.lastIndexOf('/') + 1)];
  const content = Object.values((response.content ?? {}) as Record<string, { examples?: Record<string, unknown> }>);
  return content.flatMap((media) => Object.keys(media.examples ?? {}));
};

/**
 * Adds what the limits part answers to every operation it applies to: 414 and 503 `timeout` everywhere; 413,
 * 408 and 400 `too_many_items` where a body is read; 503 `overloaded` where requests may be shed: everywhere but the
 * health checks (a critical route is shed past its reserve). Merged into the answers the operation documents.
 */
export const applyLimitAnswers = (plan: Plan, paths: Record<string, OpenApiObject>) => {
  const { overload } = plan.limits.guards;
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(item as Record<string, OpenApiObject>)) {
      if (!METHODS.has(method)) continue;
      const shed = overload && !HEALTH.has(path);
      const added = [
        'uri_too_long',
        'timeout',
        ...(operation.requestBody ? ['payload_too_large', 'request_timeout', 'too_many_items'] : []),
        ...(shed ? ['overloaded'] : []),
      ];
      const responses = (operation.responses ?? {}) as Record<string, OpenApiObject>;
      const statuses = new Set(added.map((code) => String(plan.errors.catalogue.get(code)?.status)));
      const codes = [
        ...added,
        ...[...statuses].flatMap((status) => (responses[status] ? codesOf(responses[status]) : [])),
      ];
      const merged = errorResponses(plan.errors, codes);
      for (const status of statuses) if (merged[status]) responses[status] = merged[status];
      operation.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));
    }
  }
};
