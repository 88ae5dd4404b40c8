import type { FastifyInstance, FastifyReply } from 'fastify';
import type { OverloadPlan } from '../../plan/types.ts';
import { ApiError } from '../errors/api-error.ts';

/** The event loop's current lag, in milliseconds. */
export type LagReading = () => number;

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * How the route fares while the service is overloaded: `always` served (the health checks), `reserved` served
     * up to the reserve of `limits.overload.critical`; otherwise shed.
     */
    critical?: 'always' | 'reserved';
  }
}

/**
 * Event-loop lag from a sampled timer: a timer due every `sampleMs` fires late by as much as the loop lagged.
 * Timers run at the start of a loop turn, before the I/O of that turn, so once the loop was held up the reading
 * says so before the requests that queued up meanwhile are read.
 */
export const sampleEventLoopLag = (sampleMs: number): { lag: LagReading; stop(): void } => {
  let current = 0;
  let timer: NodeJS.Timeout | undefined;
  const next = (due: number) => {
    timer = setTimeout(() => {
      const now = performance.now();
      current = Math.max(0, now - due);
      next(now + sampleMs);
    }, sampleMs);
    timer.unref();
  };
  next(performance.now() + sampleMs);
  return {
    lag: () => current,
    stop: () => clearTimeout(timer),
  };
};

/**
 * Sheds new requests with 503 `overloaded` and Retry-After while the event loop lags past the declared threshold,
 * before anything else runs for them (authentication included), so a backlog is refused quickly instead of every
 * client waiting until it times out. The health checks are served as usual; the critical routes too, as long as
 * fewer than `reserve` of their requests are in flight (counted whether overloaded or not, from the request's
 * arrival until its answer is sent or its connection closes), so that they cannot sink the process themselves.
 * `send` answers the problem. Returns whether new requests are being shed right now (the front door then steps
 * aside, so that the guard answers first as it always does).
 */
export const installOverloadGuard = (
  app: FastifyInstance,
  overload: OverloadPlan,
  send: (error: ApiError, reply: FastifyReply) => void,
  injected?: LagReading,
): (() => boolean) => {
  const sampler = injected ? undefined : sampleEventLoopLag(Math.min(100, Math.max(10, overload.lagMs / 4)));
  const lag = injected ?? (sampler as { lag: LagReading }).lag;
  const retryAfter = String(overload.retryAfterS);
  let criticalInFlight = 0;
  const released = () => {
    criticalInFlight--;
  };
  app.addHook('onRequest', (request, reply, done) => {
    const critical = request.routeOptions.config?.critical;
    if (critical === 'always') return done();
    const admitted = lag() <= overload.lagMs || (critical === 'reserved' && criticalInFlight < overload.reserve);
    if (admitted) {
      if (critical === 'reserved') {
        criticalInFlight++;
        reply.raw.once('close', released);
      }
      return done();
    }
    send(
      new ApiError('overloaded', 'The service is overloaded; retry later.', undefined, undefined, {
        'retry-after': retryAfter,
      }),
      reply,
    );
  });
  if (sampler) app.addHook('onClose', async () => sampler.stop());
  return () => lag() > overload.lagMs;
};
