import { createHash } from 'node:crypto';
import { ApiError } from '../parts/errors/api-error.ts';
import type { Handler, HandlerInput, HandlerOutput, RuntimeContext } from './context.ts';
import type { WorkerHealth } from './workers.ts';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * Wraps an unsafe handler so that it runs in one transaction and, when the request carries an
 * Idempotency-Key, claims the key and stores its answer in that same transaction: a retry replays it, a retry
 * with another method, path or body is refused (422), a retry while the first holds the key is refused (409),
 * whichever process or instance either reaches. Keys are per caller. A request that fails changes nothing and
 * stores nothing (its claim rolls back with it), so its retry simply runs again.
 */
export const withTransaction = (ctx: RuntimeContext, handler: Handler, method: string) => {
  /** The handler, refusing to commit once the request's budget is spent (its writes roll back). */
  const inTime = async (input: HandlerInput) => {
    const output = await handler(input);
    if (input.deadline?.expired) throw new ApiError('timeout', 'The request took longer than its time budget.');
    return output;
  };
  /** `url` is the request's (its path, without the query, is part of an Idempotency-Key's fingerprint). */
  return async (input: HandlerInput, url: string): Promise<HandlerOutput> => {
    const header = input.headers['idempotency-key'];
    if (header === undefined) return ctx.store.transaction(() => inTime(input));
    const key = Array.isArray(header) ? '' : header;
    if (key.length === 0 || key.length > 255) {
      throw new ApiError('idempotency_key_invalid', 'Idempotency-Key must be 1 to 255 characters.');
    }
    const fingerprint = createHash('sha256')
      .update(`${method} ${url.split('?')[0] ?? ''}\n${input.body === undefined ? '' : JSON.stringify(input.body)}`)
      .digest('base64url');
    return ctx.store.transaction(async () => {
      const claim = await ctx.store.idempotency.claim(input.caller, key, ctx.now());
      if (claim.state === 'running')
        throw new ApiError('idempotency_key_in_use', 'A request with this Idempotency-Key is still running.');
      if (claim.state === 'saved') {
        const saved = claim.response;
        if (saved.fingerprint !== fingerprint) {
          throw new ApiError('idempotency_key_reused', 'This Idempotency-Key was used with a different request.');
        }
        return { status: saved.status, body: saved.body, headers: { ...saved.headers, 'idempotent-replayed': 'true' } };
      }
      const output = await inTime(input);
      await ctx.store.idempotency.complete(input.caller, key, {
        fingerprint,
        status: output.status,
        headers: { ...output.headers },
        body: output.body ?? '',
      });
      return output;
    });
  };
};

/** How often expired Idempotency-Key records are purged, and how many go per batch (a batch is one statement). */
const SWEEP_MS = 10 * 60_000;
const SWEEP_BATCH = 500;
const SWEEP_BATCHES = 20;

/**
 * Purges Idempotency-Key records older than 24 h: at start, then every 10 minutes, at most 10,000 per sweep in
 * batches of 500 with a turn of the event loop between them, so a sweep never holds the writer for long.
 */
export const startIdempotencySweeper = (ctx: RuntimeContext, health: WorkerHealth) => {
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  const sweep = async () => {
    const cutoff = new Date(ctx.now().getTime() - IDEMPOTENCY_TTL_MS);
    for (let i = 0; i < SWEEP_BATCHES && !stopped; i++) {
      const purged = await ctx.store.idempotency.purgeBefore(cutoff, SWEEP_BATCH);
      if (purged < SWEEP_BATCH) break;
      await new Promise((next) => setImmediate(next));
    }
  };
  const run = () => {
    running = sweep().then(
      () => health.ok(),
      (error) => {
        if (!stopped) health.failed(error, 'purging expired Idempotency-Key records');
      },
    );
  };
  run();
  const timer = setInterval(run, SWEEP_MS);
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
};
