import type { FastifyReply } from 'fastify';

/**
 * Unsent text a stream may hold: beyond it, nothing more is read from the outbox until the reader drains it, and
 * a reader that has not drained it by the next heartbeat is disconnected (it resumes with Last-Event-ID). The
 * outbox is the buffer: a slow reader costs one page of memory, never more.
 */
export const STREAM_BUFFER_BYTES = 1024 * 1024;

export interface SseSource {
  readonly heartbeatMs: number;
  readonly recheckMs: number;
  /** Sends what was committed since the last call; true when there may be more right away. */
  readonly next: (send: (text: string) => void) => Promise<boolean>;
  /** Whether the caller's credentials still hold. */
  readonly stillAllowed: () => Promise<boolean>;
  /** Calls `wake` whenever the outbox may have grown; returns the unsubscribe. */
  readonly subscribe: (wake: () => void) => () => void;
  /** Called once, when the stream ends. */
  readonly release: () => void;
  /** Where the stream registers its end while it is open. */
  readonly open: Set<() => void>;
}

/** Writes the text/event-stream answer and keeps it going until either side ends it. */
export const serveSse = (reply: FastifyReply, source: SseSource) => {
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
    source.release();
    source.open.delete(stop);
    if (gracefully) res.end();
    else res.destroy();
  };
  const send = (text: string) => {
    if (!closed && text) res.write(text);
  };
  /** Waits until the reader has taken what is pending (or the stream ended), leaving no listener behind. */
  const drained = () =>
    res.writableLength <= STREAM_BUFFER_BYTES
      ? undefined
      : new Promise<void>((ok) => {
          const done = () => {
            res.off('drain', done);
            res.off('close', done);
            ok();
          };
          res.on('drain', done);
          res.on('close', done);
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
        more = (await source.next(send)) || again;
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
  }, source.heartbeatMs);
  res.on('drain', () => {
    stalled = false;
  });
  let checking = false;
  const recheck = setInterval(() => {
    if (checking) return;
    checking = true;
    void source.stillAllowed().then((ok) => {
      checking = false;
      if (ok || closed) return;
      send('event: error\ndata: {"code":"invalid_credentials"}\n\n');
      end(true);
    });
  }, source.recheckMs);
  const unsubscribe = source.subscribe(() => void pull());
  const stop = () => end(true);
  source.open.add(stop);
  res.on('close', () => end());
  // The client may have gone while the stream was being set up: its close has passed already.
  if (res.destroyed) return end();
  void pull();
};
