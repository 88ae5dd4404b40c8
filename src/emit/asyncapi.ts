import { deliveryNotes, eventChannels } from '../parts/events/asyncapi.ts';
import { eventDocs, eventRecordComponent, eventRecordName } from '../parts/events/event-schemas.ts';
import type { OpenApiObject } from '../parts/openapi-model.ts';
import { purposeInfo } from '../parts/purpose/openapi.ts';
import type { Plan } from '../plan/types.ts';

/**
 * The AsyncAPI 3.0 document of a plan's events. Each part contributes: purpose the info, resources the record
 * schemas the events carry (the same components as in the OpenAPI document), events one channel, message and
 * `send` operation per event type, the stream server and the delivery guarantees. `info.version` names the API
 * version whose shapes it shows (`shown`, the newest by default; buildAsyncApiAt gives an older one).
 */
export const buildAsyncApi = (plan: Plan, shown = plan.versioning?.newest): Record<string, unknown> => {
  const events = eventDocs(plan);
  const schemas: Record<string, OpenApiObject> = {};
  for (const resource of new Set(events.flatMap((e) => e.resources)))
    schemas[eventRecordName(resource)] = eventRecordComponent(resource, plan.resourcesByName);
  const {
    servers,
    channels,
    operations,
    messages,
    schemas: eventSchemas,
    securitySchemes,
  } = eventChannels(plan, events);
  const info = purposeInfo(plan);
  const description = [info.description, events.length ? deliveryNotes(plan) : ''].filter(Boolean).join('\n\n');
  return {
    asyncapi: '3.0.0',
    info: { ...info, ...(shown ? { version: shown } : {}), ...(description ? { description } : {}) },
    defaultContentType: 'application/json',
    ...(Object.keys(servers).length ? { servers } : {}),
    channels,
    operations,
    components: {
      schemas: { ...schemas, ...eventSchemas },
      messages,
      ...(Object.keys(securitySchemes).length ? { securitySchemes } : {}),
    },
  };
};
