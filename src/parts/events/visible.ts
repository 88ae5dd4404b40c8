import type { RuntimeContext } from '../../runtime/context.ts';
import type { Row, StoredEvent } from '../../storage/index.ts';
import type { Principal } from '../auth/principal.ts';
import { createEventWire } from './event-wire.ts';

/** An event as a client sees it. */
export interface EventView {
  readonly id: string;
  readonly type: string;
  readonly time: string;
  readonly data: Record<string, unknown>;
}

/**
 * What of an event this caller may see: nothing when the record it is about is one the caller may not read
 * (as the record was when the event happened), else the event with the caller's hidden fields left out.
 * Declared events, which carry no record, are shown to every caller of the events endpoints, or only to
 * callers with one of the roles the declaration names.
 */
export const createEventFilter = (ctx: RuntimeContext) => {
  const declared = ctx.plan.events.declared;
  const onWire = createEventWire(ctx.plan);
  return (event: StoredEvent, principal: Principal | undefined): EventView | undefined => {
    const resource = event.resource ? ctx.plan.resourcesByName.get(event.resource) : undefined;
    const view = { id: event.id, type: event.type, time: event.time, data: { ...event.data } };
    // The version a callback is rendered in (emit.ts) is no part of the event.
    if ('apiVersion' in view.data) delete view.data.apiVersion;
    if (!resource) {
      const roles = declared.get(event.type)?.roles;
      return !roles || principal?.roles.some((r) => roles.includes(r)) ? view : undefined;
    }
    const record = event.data.record as Row | undefined;
    if (record && !ctx.access.canRead(resource, principal, record)) return undefined;
    const hidden = ctx.access.hiddenFields(resource, principal);
    if (hidden.size && record) {
      const shown: Record<string, unknown> = { ...record };
      for (const name of hidden) delete shown[name];
      view.data.record = shown;
      if (Array.isArray(view.data.changed)) view.data.changed = view.data.changed.filter((f) => !hidden.has(f));
    }
    return resource.wire.plain ? view : { ...view, data: onWire(resource, view.data) };
  };
};
