import type { RuntimeContext } from '../../runtime/context.ts';
import type { PartHost } from '../../runtime/part.ts';
import type { RouteSpec } from '../../runtime/route-spec.ts';
import type { StoredEvent } from '../../storage/index.ts';
import { ApiError } from '../errors/api-error.ts';
import { createEventShift, eventInVersion } from '../versioning/event-shift.ts';
import { eventTypeFilter } from './event-log-routes.ts';
import { createOutboxHead } from './outbox-head.ts';
import { serveSse } from './sse-connection.ts';
import { createStreamCaps } from './stream-caps.ts';
import { createEventFilter } from './visible.ts';

/** Text rendered per read of the outbox, at most (and at least one event). */
const PAGE_BYTES = 256 * 1024;
/** Events read per query while a stream catches up. */
const PAGE = 500;

const text = (value: unknown): string | undefined => (typeof value === 'string' && value ? value : undefined);

/**
 * The server-sent event stream: each caller gets the events it may read, from the newest on, or from just after
 * the `Last-Event-ID` it reconnects with (so a reconnect misses nothing). A heartbeat comment keeps proxies from
 * timing out; a reader that lets more than 1 MiB pile up is disconnected, never buffered without bound; the
 * caller's credentials are checked again every `recheck` (a revoked key or an expired token ends the stream);
 * each caller may hold `maxPerCaller` streams, and the process `maxOpen`.
 */
export const streamRoute = (ctx: RuntimeContext, host: Pick<PartHost, 'health' | 'onClose'>): RouteSpec => {
  const settings = ctx.plan.events.stream;
  const { heartbeatMs, recheckMs } = settings;
  const caps = createStreamCaps(settings.maxPerCaller, settings.maxOpen);
  const visible = createEventFilter(ctx);
  const typesOf = eventTypeFilter(ctx);
  // Events in the API version of the request that opened the stream (versioning part).
  const inVersion = createEventShift(ctx.plan);
  const typeInVersion = eventInVersion(ctx.plan);
  const head = createOutboxHead(ctx, host.health('event stream'));
  /** Open streams, ended when the server closes (they would hold its close up for ever). */
  const open = new Set<() => void>();
  host.onClose(() => {
    for (const end of [...open]) end();
    head.stop();
  });

  return {
    method: 'GET',
    path: settings.path,
    operation: 'events.stream',
    kind: { action: 'events.stream', builtIn: 'api' },
    body: 'none',
    handler: async (input) => {
      const { principal, query } = input;
      const types = new Set(typesOf(query));
      const resumeId = text(input.headers['last-event-id']) ?? text(query.lastEventId);
      let seq: number;
      if (resumeId) {
        const from = await ctx.store.events.get(resumeId);
        if (!from) throw new ApiError('invalid_query', 'Last-Event-ID names no event of this service.');
        seq = from.seq;
      } else seq = await ctx.store.events.lastSeq();
      const release = caps.take(principal?.subject ? `sub:${principal.subject}` : `ip:${input.ip}`);
      /** The text of events after `seq`, up to PAGE_BYTES of it (at least one event); moves `seq` past what it covers. */
      const render = (events: StoredEvent[]): string => {
        let out = '';
        for (const e of events) {
          seq = e.seq;
          if (types.size && !types.has(e.type)) continue;
          if (!typeInVersion(e.type, input.apiVersion)) continue;
          const view = visible(e, principal);
          if (view)
            out += `id: ${view.id}\nevent: ${view.type}\ndata: ${JSON.stringify(inVersion(view, input.apiVersion, e.resource))}\n\n`;
          if (out.length >= PAGE_BYTES) break;
        }
        return out;
      };
      const reauthenticate = input.reauthenticate;
      return {
        status: 200,
        // The slot taken above is released by the stream's own close handling: it starts now, not at the turn's end.
        immediate: true,
        takeOver: (reply) =>
          serveSse(reply, {
            heartbeatMs,
            recheckMs,
            next: async (send) => {
              const batch = await ctx.store.events.after(seq, PAGE);
              send(render(batch));
              return batch.length === PAGE || seq < (batch.at(-1)?.seq ?? seq);
            },
            stillAllowed: async () => {
              if (!principal || !reauthenticate) return true;
              try {
                return (await reauthenticate())?.subject === principal.subject;
              } catch {
                return false;
              }
            },
            subscribe: (wake) => head.subscribe(wake),
            release,
            open,
          }),
      };
    },
  };
};
