import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RuntimeContext } from '../../runtime/context.ts';
import type { Principal } from '../auth/principal.ts';
import { ApiError } from '../errors/api-error.ts';
import { knownEventNames } from './event-names.ts';
import { registerEventStream } from './stream.ts';
import { createEventFilter, type EventView } from './visible.ts';

type Identify = (request: FastifyRequest) => Promise<Principal | undefined>;

const PAGE = { default: 50, max: 100 };
const SCAN_LIMIT = 5_000;

const single = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const cursorOf = (seq: number) => Buffer.from(`e${seq}`).toString('base64url');
const seqOf = (cursor: string): number => {
  const m = /^e(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m) throw new ApiError('invalid_cursor', 'The cursor is not one this service issued.');
  return Number(m[1]);
};

/**
 * The events part's HTTP side: the event log (`GET /events`, `GET /events/{id}`) and the server-sent event
 * stream (stream.ts). Both read the outbox through its committed-only reader and show each caller only the events about
 * records it may read.
 */
export const registerEventRoutes = (app: FastifyInstance, ctx: RuntimeContext, identify: Identify) => {
  const visible = createEventFilter(ctx);
  const known = new Set(knownEventNames(ctx.plan.spec));
  const base = ctx.plan.service.basePath;

  const typesOf = (query: Record<string, unknown>): string[] => {
    const text = single(query.type);
    if (query.type !== undefined && text === undefined) throw new ApiError('invalid_query', 'Give type once.');
    const types = text ? text.split(',') : [];
    for (const t of types) {
      if (!known.has(t)) throw new ApiError('invalid_filter', `No event type "${t.slice(0, 64)}".`);
    }
    return types;
  };

  /** Reads on from `afterSeq` until `limit` visible events are found (or the scan budget is spent). */
  const page = async (
    principal: Principal | undefined,
    afterSeq: number,
    limit: number,
    types: string[],
    since?: number,
  ) => {
    const out: Array<{ seq: number; view: EventView }> = [];
    let seq = afterSeq;
    let scanned = 0;
    while (out.length <= limit && scanned < SCAN_LIMIT) {
      const batch = await ctx.store.events.after(seq, 200, types);
      for (const e of batch) {
        seq = e.seq;
        if (since !== undefined && Date.parse(e.time) < since) continue;
        const view = visible(e, principal);
        if (view && out.length <= limit) out.push({ seq: e.seq, view });
      }
      scanned += batch.length;
      if (batch.length < 200) break;
    }
    return out;
  };

  app.get(`${base}/events`, async (request, reply) => {
    const principal = await identify(request);
    const query = request.query as Record<string, unknown>;
    const types = typesOf(query);
    const limitText = single(query.limit);
    const limit = limitText === undefined ? PAGE.default : Number(limitText);
    if (!Number.isInteger(limit) || limit < 1) throw new ApiError('invalid_query', 'limit must be a positive integer.');
    if (limit > PAGE.max) throw new ApiError('limit_exceeded', `limit may be at most ${PAGE.max}.`);
    const sinceText = single(query.since);
    const since = sinceText === undefined ? undefined : Date.parse(sinceText);
    if (since !== undefined && Number.isNaN(since)) throw new ApiError('invalid_query', 'since must be a date-time.');
    const cursor = single(query.cursor);
    const found = await page(principal, cursor ? seqOf(cursor) : 0, limit, types, since);
    const shown = found.slice(0, limit);
    const last = shown.at(-1);
    const nextCursor = found.length > limit && last ? cursorOf(last.seq) : null;
    return reply
      .type('application/json; charset=utf-8')
      .send(JSON.stringify({ data: shown.map((f) => f.view), nextCursor }));
  });

  registerEventStream(app, ctx, identify, typesOf);

  app.get(`${base}/events/:id`, async (request, reply) => {
    const principal = await identify(request);
    const { id } = request.params as { id: string };
    const event = await ctx.store.events.get(id); // undefined for anything that is no event id
    const view = event ? visible(event, principal) : undefined;
    if (!view) throw new ApiError('not_found', `No event with id ${id}.`);
    return reply.type('application/json; charset=utf-8').send(JSON.stringify(view));
  });
};
