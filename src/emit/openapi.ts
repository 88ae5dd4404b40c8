import { keyAdminApi } from '../parts/auth/key-admin-openapi.ts';
import { applyOwnerFields, applySecurity, securitySchemes } from '../parts/auth/openapi.ts';
import { customComponents } from '../parts/endpoints/custom-openapi.ts';
import { customPaths, endpointComponents, resourcePaths } from '../parts/endpoints/openapi.ts';
import { errorComponents } from '../parts/errors/openapi.ts';
import { eventDocs } from '../parts/events/event-schemas.ts';
import { callbackAdminApi, eventLogApi } from '../parts/events/log-openapi.ts';
import { eventWebhooks } from '../parts/events/openapi.ts';
import { webhookEndpointsApi } from '../parts/events/webhook-endpoints-openapi.ts';
import { applyLimitAnswers } from '../parts/limits/guards-openapi.ts';
import { applyLimits, limitHeaders, usageApi } from '../parts/limits/openapi.ts';
import { emptyComponents, type OpenApiComponents, type OpenApiObject } from '../parts/openapi-model.ts';
import { purposeInfo } from '../parts/purpose/openapi.ts';
import { pluralize } from '../parts/resources/naming.ts';
import { resourceComponents } from '../parts/resources/openapi.ts';
import { historySchema, statePaths } from '../parts/states/openapi.ts';
import { applyVersionParameter } from '../parts/versioning/openapi.ts';
import { versionUsageApi } from '../parts/versioning/usage-openapi.ts';
import type { Plan } from '../plan/types.ts';
import { healthApi } from './health-openapi.ts';

/**
 * Leaves out the shared responses, examples, parameters and headers nothing refers to: the catalogue has a
 * response and an example per code, most codes are answers of only some operations (or of none in this plan).
 */
const dropUnused = (components: OpenApiComponents, operations: string) => {
  const prune = (section: 'responses' | 'examples' | 'parameters' | 'headers', text: string) => {
    for (const name of Object.keys(components[section]))
      if (!text.includes(`"#/components/${section}/${name}"`)) delete components[section][name];
  };
  prune('responses', operations);
  const referring = `${operations}${JSON.stringify(components.responses)}`;
  for (const section of ['examples', 'parameters', 'headers'] as const) prune(section, referring);
};

const BUILT_IN_TAGS = [
  { name: 'Events', description: 'The event log and the event stream.' },
  { name: 'Webhook endpoints', description: 'Receivers each caller registers for events.' },
  { name: 'Admin', description: 'API keys, callbacks and API version usage, for the admin role.' },
  { name: 'Limits', description: 'Quota usage: each caller’s own, and anyone’s for the admin role.' },
  { name: 'Health', description: 'Liveness and readiness, for load balancers.' },
];

/**
 * The OpenAPI 3.1 document of a plan. Each part contributes: purpose the info, resources the record
 * schemas, endpoints the paths and shared parameters, errors the problem schema and error responses.
 * states one operation per transition and the history of each record, events the `webhooks` it sends; and the
 * built-in APIs the server mounts for this plan (event log and stream, webhook endpoints, key and callback admin,
 * health), each described where its part is.
 */
export const buildOpenApi = (plan: Plan, shown = plan.versioning?.newest): Record<string, unknown> => {
  const components = emptyComponents();
  for (const resource of plan.resources)
    Object.assign(components.schemas, resourceComponents(resource, plan.resourcesByName));
  applyOwnerFields(plan, components.schemas);
  Object.assign(components.schemas, customComponents(plan));
  const errors = errorComponents(plan.errors);
  Object.assign(components.schemas, errors.schemas);
  Object.assign(components.examples, errors.examples);
  Object.assign(components.responses, errors.responses);
  const shared = endpointComponents();
  Object.assign(components.parameters, shared.parameters);
  Object.assign(components.headers, shared.headers);

  const paths: Record<string, OpenApiObject> = {};
  for (const resource of plan.resources)
    Object.assign(paths, resourcePaths(plan, resource), statePaths(plan, resource));
  if (plan.resources.some((r) => r.states)) components.schemas.TransitionHistory = historySchema();
  for (const [path, item] of Object.entries(customPaths(plan))) paths[path] = { ...paths[path], ...item };
  const builtIns = [
    keyAdminApi(plan),
    eventLogApi(plan),
    webhookEndpointsApi(plan),
    callbackAdminApi(plan),
    healthApi(plan),
    usageApi(plan),
    versionUsageApi(plan),
  ];
  const builtInOperations = builtIns.flatMap((api) => api.operations);
  for (const api of builtIns) Object.assign(components.schemas, api.schemas);
  for (const { method, path, operation } of builtInOperations) paths[path] = { ...paths[path], [method]: operation };
  applySecurity(plan, paths, builtInOperations);
  applyLimits(plan, paths, builtInOperations);
  if (plan.limits.rate || plan.limits.quotas.size) Object.assign(components.headers, limitHeaders());
  applyVersionParameter(plan, paths, builtInOperations, shown);
  applyLimitAnswers(plan, paths);
  const pushed = eventWebhooks(plan, eventDocs(plan, new Set(Object.keys(components.schemas))));
  if (pushed) {
    Object.assign(components.schemas, pushed.schemas);
    Object.assign(components.parameters, pushed.parameters);
  }
  const schemes = securitySchemes(plan);

  const tags = [
    ...plan.resources.map((r) => ({
      name: r.name,
      description: r.description ?? `${pluralize(r.name)} and what can be done with them.`,
    })),
    ...(plan.custom.some((c) => !plan.resources.some((r) => c.path.startsWith(`${r.collectionPath}/`)))
      ? [{ name: 'Custom', description: 'Endpoints served by the service’s own handlers.' }]
      : []),
    ...BUILT_IN_TAGS.filter((t) => builtInOperations.some((o) => (o.operation.tags as string[]).includes(t.name))),
  ];
  dropUnused(components, JSON.stringify({ paths, webhooks: pushed?.webhooks }));
  return {
    openapi: '3.1.0',
    info: { ...purposeInfo(plan), ...(shown ? { version: shown } : {}) },
    // Relative: the service itself, wherever this document was fetched from (paths carry the base path).
    servers: [{ url: '/', description: 'This service.' }],
    ...(tags.length ? { tags } : {}),
    paths,
    ...(pushed ? { webhooks: pushed.webhooks } : {}),
    components: Object.keys(schemes).length ? { ...components, securitySchemes: schemes } : components,
  };
};
