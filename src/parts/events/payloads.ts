import type { RuntimeContext } from '../../runtime/context.ts';
import type { Row, StoredEvent, WebhookEndpoint } from '../../storage/index.ts';
import type { Principal } from '../auth/principal.ts';
import { createEventShift } from '../versioning/event-shift.ts';
import { createEventWire } from './event-wire.ts';
import { staticTargetProblem } from './targets.ts';
import { createEventFilter } from './visible.ts';

/** What one event becomes for one receiver: the exact bytes to sign and send, and where to. */
export interface Outgoing {
  readonly url: string;
  readonly body: string;
}

/**
 * Renders events for a webhook endpoint or a callback:
 * - a webhook endpoint gets an event only when its owner may read the record, with the owner's hidden
 *   fields left out (the same view `GET /events` gives that owner);
 * - a callback goes to the URL held in the record as it was when the event happened, with the fields hidden
 *   from a caller without roles left out, in the API version of the request that made the change (the default
 *   version for a timer's); a record without a usable URL has no callback.
 * Undefined: nothing to send, or `problem` when there was something but it cannot go.
 */
export const createPayloads = (ctx: RuntimeContext) => {
  const visible = createEventFilter(ctx);
  const { callbacks } = ctx.plan.events;
  const allowPrivate = ctx.plan.events.delivery.allowPrivateTargets;
  const onWire = createEventWire(ctx.plan);
  // The payload in the API version the endpoint is pinned to (versioning part).
  const inVersion = createEventShift(ctx.plan);
  const defaultVersion = ctx.plan.versioning?.fallback;
  const noRoles: Principal = { subject: '', roles: [], scheme: 'callback', claims: {} };

  const forCallback = (endpoint: WebhookEndpoint, event: StoredEvent): Outgoing | { problem: string } | undefined => {
    const resource = event.resource ? ctx.plan.resourcesByName.get(event.resource) : undefined;
    const field = resource ? callbacks.get(resource.name)?.field : undefined;
    const record = event.data.record as Row | undefined;
    const url = field && record ? record[field] : undefined;
    if (!resource || typeof url !== 'string' || url === '') return undefined;
    const problem = staticTargetProblem(url, allowPrivate);
    if (problem) return { problem: `callback URL ${problem}` };
    const hidden = ctx.access.hiddenFields(resource, noRoles);
    const shown: Record<string, unknown> = { ...record };
    for (const name of hidden) delete shown[name];
    const { apiVersion, ...rest } = event.data;
    const data: Record<string, unknown> = { ...rest, record: shown };
    // The names of hidden fields are left out of `changed` too, as the event log does for any reader.
    if (Array.isArray(data.changed)) data.changed = data.changed.filter((f) => !hidden.has(f));
    const view = { id: event.id, type: event.type, time: event.time, data: onWire(resource, data) };
    // In the version of the request that made the change (a timer's change: the default version).
    const version = typeof apiVersion === 'string' ? apiVersion : (endpoint.apiVersion ?? defaultVersion);
    return { url, body: JSON.stringify(inVersion(view, version, event.resource)) };
  };

  return (endpoint: WebhookEndpoint, event: StoredEvent): Outgoing | { problem: string } | undefined => {
    if (endpoint.kind === 'callback') return forCallback(endpoint, event);
    if (endpoint.events.length && !endpoint.events.includes(event.type)) return undefined;
    const owner: Principal = {
      subject: endpoint.ownerSubject,
      roles: endpoint.ownerRoles,
      scheme: 'webhook',
      claims: {},
    };
    const view = visible(event, owner);
    return view
      ? { url: endpoint.url, body: JSON.stringify(inVersion(view, endpoint.apiVersion, event.resource)) }
      : undefined;
  };
};
