import type { ResourcePlan } from '../../plan/types.ts';
import type { RuntimeContext, WriteEvent, WriteHook } from '../../runtime/context.ts';
import type { NewEvent } from '../../storage/index.ts';
import { createRecordWriter } from '../resources/record-io.ts';

const changedFields = (resource: ResourcePlan, before: Record<string, unknown>, after: Record<string, unknown>) =>
  resource.fields
    .filter((f) => !f.writeOnly && JSON.stringify(before[f.name] ?? null) !== JSON.stringify(after[f.name] ?? null))
    .map((f) => f.name);

/**
 * The outbox hook: every change of a resource with events becomes one event row, written inside the change's
 * own transaction (hooks run there), so an event exists exactly when its change committed. Nothing else
 * happens on the write path: webhook endpoints and callbacks read the outbox after commit, each from its own
 * cursor. The record is stored whole (write-only fields left out); what a reader may see of it is decided
 * when it is read. The store tells its readers of every event appended (the delivery worker wakes on it).
 */
export const outboxHook = (ctx: RuntimeContext): WriteHook | undefined => {
  const resources = ctx.plan.events.autoResources;
  if (resources.size === 0) return undefined;
  const writers = new Map(ctx.plan.resources.map((r) => [r.name, createRecordWriter(r)]));
  const append = (e: NewEvent) => ctx.store.events.append(e);
  const callbacks = ctx.plan.events.callbacks;
  return (event: WriteEvent) => {
    const { resource } = event;
    if (!resources.has(resource.name)) return;
    // A callback is rendered in the API version of the request that made the change (payloads.ts): kept with it.
    const version = event.apiVersion && callbacks.has(resource.name) ? { apiVersion: event.apiVersion } : {};
    const writer = writers.get(resource.name) as ReturnType<typeof createRecordWriter>;
    // A created event happens when its record was created: the record's own createdAt, no second clock reading.
    const time =
      event.kind === 'created' && typeof event.after.createdAt === 'string'
        ? event.after.createdAt
        : ctx.now().toISOString();
    switch (event.kind) {
      case 'created': {
        // The record's JSON is written once when the answer to the create showed all of it.
        const json = event.json ?? writer.serialize(event.after);
        return append({
          type: `${resource.name}.created`,
          time,
          resource: resource.name,
          recordId: event.after.id,
          dataJson: `{"record":${json},"actor":${JSON.stringify(event.actor)}${
            version.apiVersion ? `,"apiVersion":${JSON.stringify(version.apiVersion)}` : ''
          }}`,
        });
      }
      case 'updated':
        return append({
          type: `${resource.name}.updated`,
          time,
          resource: resource.name,
          recordId: event.after.id,
          data: {
            record: writer.toApi(event.after),
            changed: changedFields(resource, event.before, event.after),
            actor: event.actor,
            ...version,
          },
        });
      case 'deleted':
        return append({
          type: `${resource.name}.deleted`,
          time,
          resource: resource.name,
          recordId: event.before.id,
          data: { record: writer.toApi(event.before), actor: event.actor, ...version },
        });
      case 'transitioned':
        return append({
          type: event.transition.event,
          time,
          resource: resource.name,
          recordId: event.after.id,
          data: {
            record: writer.toApi(event.after),
            transition: event.transition.name,
            from: event.before[resource.states?.field ?? ''],
            to: event.transition.to,
            input: event.input,
            actor: event.actor,
            ...version,
          },
        });
    }
  };
};
