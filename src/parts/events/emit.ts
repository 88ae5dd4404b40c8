import type { Plan, ResourcePlan } from '../../plan/types.ts';
import type { RuntimeContext, WriteEvent, WriteHook } from '../../runtime/context.ts';
import type { StoredEvent } from '../../storage/index.ts';
import { createRecordWriter, newEventId } from '../resources/record-io.ts';
import { autoEventsCover } from './event-names.ts';
import { createEventFilter } from './visible.ts';

/** Resources whose changes are events: `events.auto: true` (all) or a list of resource names. */
export const autoEventResources = (plan: Plan): ReadonlySet<string> => {
  const covers = autoEventsCover(plan.spec);
  return new Set(plan.resources.filter((r) => covers(r.name)).map((r) => r.name));
};

const changedFields = (resource: ResourcePlan, before: Record<string, unknown>, after: Record<string, unknown>) =>
  resource.fields
    .filter((f) => JSON.stringify(before[f.name] ?? null) !== JSON.stringify(after[f.name] ?? null))
    .map((f) => f.name);

/**
 * The outbox hook: every change of a resource with events becomes an event row, written inside the change's own
 * transaction (hooks run there), so an event exists exactly when its change committed. The record is stored
 * whole (write-only fields left out); what a reader may see of it is decided when it is read.
 */
export const outboxHook = (ctx: RuntimeContext, queued: () => void): WriteHook | undefined => {
  const resources = autoEventResources(ctx.plan);
  if (resources.size === 0) return undefined;
  const writers = new Map(ctx.plan.resources.map((r) => [r.name, createRecordWriter(r)]));
  const fanOut = createFanOut(ctx, queued);
  const stringifyOf = (name: string) => (writers.get(name) as ReturnType<typeof createRecordWriter>).stringify;
  const append = async (e: Omit<StoredEvent, 'seq'> & { dataJson?: string }) => {
    await ctx.store.events.append(e);
    await fanOut(e);
  };
  return async (event: WriteEvent) => {
    const { resource } = event;
    if (!resources.has(resource.name)) return;
    const toApi = writers.get(resource.name)?.toApi ?? ((row) => row);
    const nowMs = ctx.now().getTime();
    const base = { id: newEventId(nowMs), time: new Date(nowMs).toISOString(), resource: resource.name };
    switch (event.kind) {
      case 'created': {
        const record = toApi(event.after);
        return append({
          ...base,
          type: `${resource.name}.created`,
          recordId: event.after.id,
          data: { record, actor: event.actor },
          dataJson: `{"record":${stringifyOf(resource.name)(record)},"actor":${JSON.stringify(event.actor)}}`,
        });
      }
      case 'updated':
        return append({
          ...base,
          type: `${resource.name}.updated`,
          recordId: event.after.id,
          data: {
            record: toApi(event.after),
            changed: changedFields(resource, event.before, event.after),
            actor: event.actor,
          },
        });
      case 'deleted':
        return append({
          ...base,
          type: `${resource.name}.deleted`,
          recordId: event.before.id,
          data: { record: toApi(event.before), actor: event.actor },
        });
      case 'transitioned':
        return append({
          ...base,
          type: event.transition.event,
          recordId: event.after.id,
          data: {
            record: toApi(event.after),
            transition: event.transition.name,
            from: event.before[resource.states?.field ?? ''],
            to: event.transition.to,
            input: event.input,
            actor: event.actor,
          },
        });
    }
  };
};

/**
 * Queues one delivery per live webhook endpoint that subscribes to the event and whose owner may read its
 * record, in the event's own transaction: a committed event always has its deliveries, a rolled-back one none.
 */
export const createFanOut = (ctx: RuntimeContext, queued: () => void) => {
  const visible = createEventFilter(ctx);
  return async (event: Omit<StoredEvent, 'seq'>) => {
    const endpoints = await ctx.store.webhooks.liveEndpoints();
    if (endpoints.length === 0) return;
    let any = false;
    for (const endpoint of endpoints) {
      if (endpoint.events.length && !endpoint.events.includes(event.type)) continue;
      const owner = { subject: endpoint.ownerSubject, roles: endpoint.ownerRoles, scheme: 'webhook', claims: {} };
      if (!visible({ ...event, seq: 0 }, owner)) continue;
      await ctx.store.webhooks.enqueue(endpoint.id, event.id, event.time);
      any = true;
    }
    if (any) queued();
  };
};
