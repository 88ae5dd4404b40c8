import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, LogController } from 'fastify';
import { createAccess } from '../parts/auth/access.ts';
import { authPart } from '../parts/auth/auth-part.ts';
import { passwordFieldsOf } from '../parts/auth/passwords.ts';
import { endpointsPart } from '../parts/endpoints/endpoints-part.ts';
import { ApiError } from '../parts/errors/api-error.ts';
import { createProblemRenderer } from '../parts/errors/runtime.ts';
import { eventsPart } from '../parts/events/events-part.ts';
import { formatBytes } from '../parts/limits/docs.ts';
import { limitsPart } from '../parts/limits/limits-part.ts';
import { installOverloadGuard } from '../parts/limits/overload.ts';
import { redisWindowCounters } from '../parts/limits/redis-failure-counters.ts';
import { statesPart } from '../parts/states/states-part.ts';
import { rewriteVersionPath } from '../parts/versioning/select.ts';
import { versioningPart } from '../parts/versioning/versioning-part.ts';
import type { Plan } from '../plan/types.ts';
import { createAnswerTurn } from './answer-turn.ts';
import { registerBodyReader } from './body.ts';
import type { RuntimeContext } from './context.ts';
import { docsPart } from './docs-part.ts';
import { KEEP_ALIVE_MS, shuttingDown } from './drain.ts';
import { sendProblem } from './errors.ts';
import { type FrontDoorHost, installFrontDoor, requestIdOf } from './front-door.ts';
import { healthPart } from './health-part.ts';
import { startIdempotencySweeper } from './idempotency.ts';
import type { ServerPart } from './part.ts';
import { createPipeline } from './pipeline.ts';
import { requestLogger } from './request-logger.ts';
import { ROUTER_OPTIONS } from './route-spec.ts';
import type { ServerOptions } from './server-options.ts';
import { SchemaCompiler } from './validator.ts';
import { clientErrorHandler, frameworkErrors } from './wire-errors.ts';
import { createWorkerRegistry } from './workers.ts';

export type { ServerOptions } from './server-options.ts';

/**
 * The parts of the server, in the order they install. Their write hooks run in this order inside each write's
 * transaction (a quota's count, a record's timers, then its outbox event, then the callback URL check).
 */
const PARTS: readonly ServerPart[] = [
  authPart,
  limitsPart,
  versioningPart,
  endpointsPart,
  statesPart,
  eventsPart,
  docsPart,
  healthPart,
];

/** How long after the port opens the validators left for their first use start compiling in the background. */
const BACKGROUND_COMPILE_AFTER_MS = 250;

/** Header names of apiKey schemes, redacted from logs like Authorization and Cookie. */
const apiKeyHeaders = (plan: Plan): string[] =>
  [...plan.auth.schemes.values()]
    .filter((s) => s.type === 'apiKey' && (s.in ?? 'header') === 'header')
    .map((s) => `req.headers["${(s.name ?? 'x-api-key').toLowerCase()}"]`);

/** Assembles the HTTP service from a plan: the parts install into one pipeline, compiled once, here. */
export const createServer = async (plan: Plan, options: ServerOptions): Promise<FastifyInstance> => {
  const render = createProblemRenderer(plan.errors);
  const { guards } = plan.limits;
  const rewriteUrl =
    plan.versioning?.scheme === 'path' ? rewriteVersionPath(plan.versioning, plan.service.basePath) : undefined;
  const app = Fastify({
    logger: {
      level: options.logLevel ?? 'info',
      ...(options.logStream ? { stream: options.logStream } : {}),
      redact: {
        paths: ['req.headers.authorization', 'req.headers.cookie', ...apiKeyHeaders(plan)],
        censor: '[redacted]',
      },
    },
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: requestLogger,
    bodyLimit: plan.limits.bodyBytes,
    // Receiving the whole request (limits.timeouts.body); Node checks it every connectionsCheckingInterval (below).
    requestTimeout: guards.receiveTimeoutMs,
    connectionTimeout: 0,
    keepAliveTimeout: KEEP_ALIVE_MS,
    forceCloseConnections: 'idle',
    // While closing, requests already on their way are answered (drain.ts), not refused.
    return503OnClosing: false,
    genReqId: requestIdOf,
    routerOptions: ROUTER_OPTIONS,
    ...(rewriteUrl ? { rewriteUrl } : {}),
    frameworkErrors: frameworkErrors(render),
    clientErrorHandler: clientErrorHandler(render, guards.headerBytes),
  });
  const server = app.server as typeof app.server & { maxHeaderSize?: number; connectionsCheckingInterval: number };
  server.headersTimeout = guards.headersTimeoutMs;
  server.maxHeaderSize = guards.headerBytes;
  // Node looks for slow headers and bodies only this often (30 s by default, so a 20 s limit cut at 20–50 s): at
  // most 1 s, and a tenth of the shorter time-out, so a client is cut within about a second of the declared time.
  server.connectionsCheckingInterval = Math.max(
    10,
    Math.min(1_000, Math.floor(Math.min(guards.headersTimeoutMs, guards.receiveTimeoutMs) / 10)),
  );
  /** An answer from a global hook, before the route's own steps: the same headers every answer carries. */
  const early = (error: ApiError, reply: FastifyReply): void => {
    reply.header('x-request-id', reply.request.id);
    reply.header('x-content-type-options', 'nosniff');
    // A URL too long to serve is not echoed, not even its path.
    sendProblem(render, reply, error, error.code === 'uri_too_long' ? '' : (reply.request.url.split('?')[0] ?? ''));
  };
  const shedding = guards.overload && installOverloadGuard(app, guards.overload, early, options.eventLoopLag);

  const passwordFields = passwordFieldsOf(plan);
  const redisUrl = options.redisUrl ?? plan.limits.store;
  // The Redis client is loaded only when counters are shared through Redis.
  const counterConnection = redisUrl
    ? await (await import('../parts/limits/redis-connection.ts')).openCounterConnection(
        redisUrl,
        options.redisPrefix ?? `nf:${plan.service.name}:`,
        app.log,
      )
    : undefined;
  if (counterConnection) app.addHook('onClose', async () => counterConnection.close());
  const ctx: RuntimeContext = {
    plan,
    store: options.store,
    schemas: new SchemaCompiler(),
    now: options.now ?? (() => new Date()),
    hooks: [],
    access: createAccess(plan, passwordFields),
    passwordFields,
    counters: counterConnection
      ? redisWindowCounters(counterConnection, options.store.counters)
      : options.store.counters,
    ...(counterConnection ? { counterConnection } : {}),
  };

  registerBodyReader(app, plan.limits.bodyBytes);
  // Callback-style hooks: an async hook costs a promise per request. Requests are counted here too (the
  // delivery worker slows down while they saturate the process): no second listener on the server.
  let served = 0;
  const { drain } = options;
  const tooLong = `The request target is longer than ${formatBytes(guards.urlBytes)}.`;
  app.addHook('onRequest', (request, reply, done) => {
    served++;
    reply.header('x-request-id', request.id);
    reply.header('x-content-type-options', 'nosniff');
    // Answered here, before routing's work (authentication, the body) and without echoing the URL.
    if (request.url.length > guards.urlBytes) early(new ApiError('uri_too_long', tooLong), reply);
    // Pipelined behind an answer that closed the connection: its answer could never be sent, so it is not carried out.
    else if (drain?.draining && !drain.closesAfter(request.raw, reply.raw)) early(shuttingDown(), reply);
    else done();
  });
  // Below 'info' (e.g. --log-level warn) the request lines would be dropped anyway: skip the hook entirely.
  const logsRequests = (app.log as FastifyBaseLogger & { isLevelEnabled(level: string): boolean }).isLevelEnabled(
    'info',
  );
  if (logsRequests) {
    app.addHook('onResponse', (request, reply, done) => {
      // One line per request; the path only, so credentials in a query string never reach the log.
      request.log.info(
        {
          method: request.method,
          path: request.url.split('?')[0],
          status: reply.statusCode,
          ms: Math.round(reply.elapsedTime),
          // Who still uses which API version (versioning part): the caller is the principal's subject.
          ...(request.exchange?.version
            ? { apiVersion: request.exchange.version, caller: request.exchange.principal?.subject ?? '' }
            : {}),
        },
        'request',
      );
      done();
    });
  }

  // An answer written at the front door, before Fastify: the same headers, count and log line as one from a hook.
  const door: FrontDoorHost = {
    headers: (request) => ['x-request-id', requestIdOf(request), 'x-content-type-options', 'nosniff'],
    answered(request, path, status, reqId) {
      served++;
      if (logsRequests) app.log.info({ reqId, method: request.method, path, status, ms: 0 }, 'request');
    },
  };
  const registry = createWorkerRegistry(app.log);
  // Answers are written together at the end of each turn of the event loop (answer-turn.ts).
  const turn = createAnswerTurn((error) => app.log.error({ err: error }, 'an answer could not be written'));
  const pipeline = createPipeline(app, ctx, options, { render, registry, requests: () => served, door, turn });
  for (const part of PARTS) await part.install(pipeline.host);
  pipeline.host.worker('idempotency', (health) => startIdempotencySweeper(ctx, health));
  await pipeline.build();
  const frontDoor = pipeline.frontDoor();
  // While draining, shedding, or refusing a too-long target, Fastify answers as before.
  if (frontDoor)
    installFrontDoor(
      server,
      frontDoor,
      rewriteUrl,
      (request) => drain?.draining === true || shedding?.() === true || (request.url?.length ?? 0) > guards.urlBytes,
    );
  // The validators left for their first use (SchemaCompiler.later) are compiled once the port is open.
  app.addHook('onListen', (done) => {
    void ctx.schemas.compileInBackground(BACKGROUND_COMPILE_AFTER_MS);
    done();
  });
  return app;
};
