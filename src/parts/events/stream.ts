import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RuntimeContext } from '../../runtime/context.ts';
import { parseDuration } from '../../spec/units.ts';
import type { StoredEvent } from '../../storage/index.ts';
import type { Principal } from '../auth/principal.ts';
import { ApiError } from '../errors/api-error.ts';
import { createEventFilter } from './visible.ts';

type Identify = (request: FastifyRequest) => Promise<Principal | undefined>;

/**
 * Unsent text a stream may hold: beyond it, nothing more is read from the outbox until the reader drains it, and
 * a reader that has not drained it by the next heartbeat is disconnected (it resumes with Last-Event-ID). The
 * outbox is the buffer: a slow reader costs one page of memory, never more.
 */
const STREAM_BUFFER_BYTES = 1024 * 1024;
/** Text rendered per read of the outbox, at most (and at least one event). */
const PAGE_BYTES = 256 * 1024;
/** Events read per query while a stream catches up. */
const PAGE = 500;
/** How often the newest seq is looked at, once for all streams. */
const HEAD_POLL_MS = 100;

export const STREAM_DEFAULTS = { heartbeat: '15s', recheck: '60s', maxPerCaller: 5, maxOpen: 1000 } as const;

/**
 * Watches the outbox's newest seq for every open stream at once (one cheap query per 100 ms while any
 * stream is open), so an idle stream costs no query of its own.
 */
const createHead = (ctx: RuntimeContext) => {
  const listeners = new Set<(head: number) => void>();
  let timer: NodeJS.Timeout | undefined;
  let head = 0;
  const poll = async () => {
    try {
      const now = await ctx.store.events.lastSeq();
      if (now > head) {
        head = now;
        for (const listener of listeners) listener(head);
      }
    } catch {
      // closing, or busy: the next poll looks again
    }
  };
  return {
    subscribe(listener: (head: number) => void) {
      listeners.add(listener);
      if (!timer) {
        timer = setInterval(() => void poll(), HEAD_POLL_MS);
        timer.unref();
      }
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0 && timer) {
          clearInterval(timer);
          timer = undefined;
        }
      };
    },
    stop() {
      listeners.clear();
      if (timer) clearInterval(timer);
      timer = undefined;
    },
  };
};

/** Open streams per caller and in all, within the spec's caps. */
const createStreamCounts = (maxPerCaller: number, maxOpen: number) => {
  const perCaller = new Map<string, number>();
  let open = 0;
  return {
    /** Counts a new stream in, or throws 429 too_many_streams; the answer releases it. */
    take(caller: string): () => void {
      const mine = perCaller.get(caller) ?? 0;
      if (mine >= maxPerCaller || open >= maxOpen) {
        throw new ApiError(
          'too_many_streams',
          mine >= maxPerCaller
            ? `At most ${maxPerCaller} event streams may be open at once per caller.`
            : 'The service has as many event streams open as it serves.',
          undefined,
          undefined,
          { 'retry-after': '5' },
        );
      }
      perCaller.set(caller, mine + 1);
      open++;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        open--;
        const left = (perCaller.get(caller) ?? 1) - 1;
        if (left > 0) perCaller.set(caller, left);
        else perCaller.delete(caller);
      };
    },
  };
};

/**
 * The server-sent event stream: each caller gets the events it may read, from the newest on, or from just after
 * the `Last-Event-ID` it reconnects with (so a reconnect misses nothing). A heartbeat comment keeps proxies from
 * timing out; a reader that lets more than 1 MiB pile up is disconnected, never buffered without bound; the
 * caller's credentials are checked again every `recheck` (a revoked key or an expired token ends the stream);
 * each caller may hold `maxPerCaller` streams, and the process `maxOpen`.
 */
export const registerEventStream = (
  app: FastifyInstance,
  ctx: RuntimeContext,
  identify: Identify,
  typesOf: (query: Record<string, unknown>) => string[],
) => {
  const options = ctx.plan.spec.events?.stream ?? {};
  const path = `${ctx.plan.service.basePath}${options.path ?? '/events/stream'}`;
  const heartbeatMs = parseDuration(options.heartbeat ?? STREAM_DEFAULTS.heartbeat) ?? 15_000;
  const recheckMs = parseDuration(options.recheck ?? STREAM_DEFAULTS.recheck) ?? 60_000;
  const counts = createStreamCounts(
    options.maxPerCaller ?? STREAM_DEFAULTS.maxPerCaller,
    options.maxOpen ?? STREAM_DEFAULTS.maxOpen,
  );
  const visible = createEventFilter(ctx);
  const head = createHead(ctx);
  /** Open streams, ended when the server closes (they would hold its close up for ever). */
  const open = new Set<() => void>();
  app.addHook('preClose', async () => {
    for (const end of [...open]) end();
    head.stop();
  });

  app.get(path, async (request, reply) => {
    const principal = await identify(request);
    const types = new Set(typesOf(request.query as Record<string, unknown>));
    const resumeId =
      (typeof request.headers['last-event-id'] === 'string' ? request.headers['last-event-id'] : undefined) ??
      (typeof (request.query as Record<string, unknown>).lastEventId === 'string'
        ? ((request.query as Record<string, unknown>).lastEventId as string)
        : undefined);
    let seq: number;
    if (resumeId) {
      const from = await ctx.store.events.get(resumeId);
      if (!from) throw new ApiError('invalid_query', 'Last-Event-ID names no event of this service.');
      seq = from.seq;
    } else seq = await ctx.store.events.lastSeq();
    const release = counts.take(principal?.subject ? `sub:${principal.subject}` : `ip:${request.ip}`);
    /** The text of events after `seq`, up to PAGE_BYTES of it (at least one event); moves `seq` past what it covers. */
    const render = (events: StoredEvent[]): string => {
      let out = '';
      for (const e of events) {
        seq = e.seq;
        if (types.size && !types.has(e.type)) continue;
        const view = visible(e, principal);
        if (view) out += `id: ${view.id}\nevent: ${view.type}\ndata: ${JSON.stringify(view)}\n\n`;
        if (out.length >= PAGE_BYTES) break;
      }
      return out;
    };
    serve(reply, {
      heartbeatMs,
      recheckMs,
      /** Sends what was committed after `seq`; true when there may be more right away. */
      next: async (send) => {
        const batch = await ctx.store.events.after(seq, PAGE);
        send(render(batch));
        return batch.length === PAGE || seq < (batch.at(-1)?.seq ?? seq);
      },
      stillAllowed: async () => {
        if (!principal) return true;
        try {
          return (await identify(request))?.subject === principal.subject;
        } catch {
          return false;
        }
      },
      subscribe: (wake) => head.subscribe(wake),
      release,
      open,
    });
  });
};

interface StreamPlan {
  readonly heartbeatMs: number;
  readonly recheckMs: number;
  readonly next: (send: (text: string) => void) => Promise<boolean>;
  readonly stillAllowed: () => Promise<boolean>;
  readonly subscribe: (wake: () => void) => () => void;
  readonly release: () => void;
  /** Where the stream registers its end while it is open. */
  readonly open: Set<() => void>;
}

/** Writes the text/event-stream answer and keeps it going until either side ends it. */
const serve = (reply: FastifyReply, plan: StreamPlan) => {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
    'x-request-id': String(reply.request.id),
  });
  res.write(': connected\n\n');
  let closed = false;
  let reading = false;
  let again = false;
  /** Ends the stream: at once (the reader is gone or too slow), or after what was written (`gracefully`). */
  const end = (gracefully = false) => {
    if (closed) return;
    closed = true;
    clearInterval(heartbeat);
    clearInterval(recheck);
    unsubscribe();
    plan.release();
    plan.open.delete(stop);
    if (gracefully) res.end();
    else res.destroy();
  };
  const send = (text: string) => {
    if (!closed && text) res.write(text);
  };
  /** Waits until the reader has taken what is pending (or the stream ended). */
  const drained = () =>
    res.writableLength <= STREAM_BUFFER_BYTES
      ? undefined
      : new Promise<void>((ok) => {
          res.once('drain', ok);
          res.once('close', ok);
        });
  const pull = async () => {
    if (closed) return;
    if (reading) {
      again = true;
      return;
    }
    reading = true;
    try {
      let more = true;
      while (more && !closed) {
        again = false;
        more = (await plan.next(send)) || again;
        const waiting = drained();
        if (waiting) await waiting;
      }
    } catch {
      end(); // the store is closing
    } finally {
      reading = false;
    }
  };
  let stalled = false;
  const heartbeat = setInterval(() => {
    // Over the buffer at two heartbeats in a row, with no drain between: the reader is not reading.
    const over = res.writableLength > STREAM_BUFFER_BYTES;
    if (over && stalled) return end();
    stalled = over;
    send(': heartbeat\n\n');
  }, plan.heartbeatMs);
  res.on('drain', () => {
    stalled = false;
  });
  const recheck = setInterval(() => {
    void plan.stillAllowed().then((ok) => {
      if (ok || closed) return;
      send('event: error\ndata: {"code":"invalid_credentials"}\n\n');
      end(true);
    });
  }, plan.recheckMs);
  const unsubscribe = plan.subscribe(() => void pull());
  const stop = () => end(true);
  plan.open.add(stop);
  res.on('close', () => end());
  void pull();
};
