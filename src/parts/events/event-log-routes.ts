import type { HandlerInput, RuntimeContext } from '../../runtime/context.ts';
import type { RouteSpec } from '../../runtime/route-spec.ts';
import type { Principal } from '../auth/principal.ts';
import { ApiError } from '../errors/api-error.ts';
import { createEventShift, eventInVersion } from '../versioning/event-shift.ts';
import { createEventFilter, type EventView } from './visible.ts';

const PAGE = { default: 50, max: 100 };
const SCAN_LIMIT = 5_000;
const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8' };

const single = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const cursorOf = (seq: number) => Buffer.from(`e${seq}`).toString('base64url');
const seqOf = (cursor: string): number => {
  const m = /^e(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m) throw new ApiError('invalid_cursor', 'The cursor is not one this service issued.');
  return Number(m[1]);
};

/** The `type` filter of the event log and the stream: event types of this service, comma-separated. */
export const eventTypeFilter = (ctx: RuntimeContext) => {
  const known = new Set(ctx.plan.events.types);
  return (query: HandlerInput['query']): string[] => {
    const text = single(query.type);
    if (query.type !== undefined && text === undefined) throw new ApiError('invalid_query', 'Give type once.');
    const types = text ? text.split(',') : [];
    for (const t of types) {
      if (!known.has(t)) throw new ApiError('invalid_filter', `No event type "${t.slice(0, 64)}".`);
    }
    return types;
  };
};

/**
 * The event log: `GET /events` (cursor, type, since) and `GET /events/{id}`. Both read the outbox through its
 * committed-only reader and show each caller only the events about records it may read.
 */
export const eventLogRoutes = (ctx: RuntimeContext): RouteSpec[] => {
  const visible = createEventFilter(ctx);
  const typesOf = eventTypeFilter(ctx);
  // Each event in the API version of the request that reads it (versioning part).
  const inVersion = createEventShift(ctx.plan);
  // Event types the caller's version does not have (`add-event`, `remove-event`) are not shown in it.
  const typeInVersion = eventInVersion(ctx.plan);

  /** Reads on from `afterSeq` until `limit` visible events are found (or the scan budget is spent). */
  const page = async (
    principal: Principal | undefined,
    afterSeq: number,
    limit: number,
    types: string[],
    apiVersion: string | undefined,
    since?: number,
  ) => {
    const out: Array<{ seq: number; view: EventView; resource: string | undefined }> = [];
    let seq = afterSeq;
    let scanned = 0;
    while (out.length <= limit && scanned < SCAN_LIMIT) {
      const batch = await ctx.store.events.after(seq, 200, types);
      for (const e of batch) {
        seq = e.seq;
        if (since !== undefined && Date.parse(e.time) < since) continue;
        if (!typeInVersion(e.type, apiVersion)) continue;
        const view = visible(e, principal);
        if (view && out.length <= limit) out.push({ seq: e.seq, view, resource: e.resource });
      }
      scanned += batch.length;
      if (batch.length < 200) break;
    }
    return out;
  };

  const kind = { action: 'events', builtIn: 'api' } as const;
  return [
    {
      method: 'GET',
      path: '/events',
      operation: 'events.list',
      kind,
      body: 'none',
      handler: async ({ query, principal, apiVersion }) => {
        const types = typesOf(query);
        const limitText = single(query.limit);
        const limit = limitText === undefined ? PAGE.default : Number(limitText);
        if (!Number.isInteger(limit) || limit < 1)
          throw new ApiError('invalid_query', 'limit must be a positive integer.');
        if (limit > PAGE.max) throw new ApiError('limit_exceeded', `limit may be at most ${PAGE.max}.`);
        const sinceText = single(query.since);
        const since = sinceText === undefined ? undefined : Date.parse(sinceText);
        if (since !== undefined && Number.isNaN(since))
          throw new ApiError('invalid_query', 'since must be a date-time.');
        const cursor = single(query.cursor);
        const found = await page(principal, cursor ? seqOf(cursor) : 0, limit, types, apiVersion, since);
        const shown = found.slice(0, limit);
        const last = shown.at(-1);
        const nextCursor = found.length > limit && last ? cursorOf(last.seq) : null;
        return {
          status: 200,
          headers: JSON_TYPE,
          body: JSON.stringify({ data: shown.map((f) => inVersion(f.view, apiVersion, f.resource)), nextCursor }),
        };
      },
    },
    {
      method: 'GET',
      path: '/events/{id}',
      operation: 'events.get',
      kind,
      body: 'none',
      handler: async ({ params, principal, apiVersion }) => {
        const id = params.id ?? '';
        const event = await ctx.store.events.get(id); // undefined for anything that is no event id
        const view = event && typeInVersion(event.type, apiVersion) ? visible(event, principal) : undefined;
        if (!view) throw new ApiError('not_found', `No event with id ${id}.`);
        return { status: 200, headers: JSON_TYPE, body: JSON.stringify(inVersion(view, apiVersion, event?.resource)) };
      },
    },
  ];
};
