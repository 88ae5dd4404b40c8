import { isRecord } from '../../spec/check-context.ts';
import type { ServiceSpec } from '../../spec/schema.ts';
import { knownEventNames } from '../events/event-names.ts';
import { STREAM_DEFAULTS } from '../events/stream-settings.ts';
import { USAGE_PATH } from './usage-routes.ts';

const WEBHOOKS = '/webhook-endpoints';

/**
 * The built-in API routes a spec gets ("METHOD /path" under the base path, as per-route limits name them): the
 * event log and stream and the webhook endpoints API when it has events, the key admin API when it has auth
 * schemes, the usage API when it has quotas. Per-route sizes, time-outs and rates may name them like declared
 * routes (check.ts); test/limits-built-in-routes.test.ts holds this list to the routes the server registers.
 */
export const builtInRoutes = (spec: ServiceSpec): string[] => {
  const routes: string[] = [];
  const events = isRecord(spec.events) ? spec.events : {};
  if (knownEventNames(spec).length > 0) {
    const stream = isRecord(events.stream) && typeof events.stream.path === 'string' ? events.stream.path : undefined;
    routes.push('GET /events', 'GET /events/{id}', `GET ${stream ?? STREAM_DEFAULTS.path}`);
    const webhooks = isRecord(events.webhooks) ? events.webhooks : {};
    if (webhooks.enabled !== false)
      routes.push(
        `POST ${WEBHOOKS}`,
        `GET ${WEBHOOKS}`,
        `GET ${WEBHOOKS}/{id}`,
        `PATCH ${WEBHOOKS}/{id}`,
        `DELETE ${WEBHOOKS}/{id}`,
        `POST ${WEBHOOKS}/{id}/rotate-secret`,
        `GET ${WEBHOOKS}/{id}/deliveries`,
        `POST ${WEBHOOKS}/{id}/deliveries/{delivery}/retry`,
      );
  }
  const auth = isRecord(spec.auth) ? spec.auth : {};
  if (isRecord(auth.schemes) && Object.keys(auth.schemes).length > 0)
    routes.push('GET /_ninefold/keys', 'POST /_ninefold/keys', 'DELETE /_ninefold/keys/{id}');
  if (isRecord(spec.limits) && isRecord(spec.limits.quotas) && Object.keys(spec.limits.quotas).length > 0)
    routes.push(`GET ${USAGE_PATH}`, `DELETE ${USAGE_PATH}/{subject}`);
  return routes;
};
