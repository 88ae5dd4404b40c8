import { randomUUID } from 'node:crypto';
import type { LookupFunction } from 'node:net';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyRequest, LogController } from 'fastify';
import { createAccess } from '../parts/auth/access.ts';
import { type AuthRequest, createAuthenticator } from '../parts/auth/authenticate.ts';
import { registerKeyAdmin } from '../parts/auth/key-admin.ts';
import { passwordFieldsOf } from '../parts/auth/passwords.ts';
import type { Principal } from '../parts/auth/principal.ts';
import { routeAccess } from '../parts/auth/route-access.ts';
import type { BuiltInPage } from '../parts/auth/schema.ts';
import { ApiError } from '../parts/errors/api-error.ts';
import { createProblemRenderer } from '../parts/errors/runtime.ts';
import {
  callbackUrlHook,
  ensureCallbackEndpoints,
  hasCallbacks,
  registerCallbackAdmin,
} from '../parts/events/callbacks.ts';
import { declaredEmitter } from '../parts/events/declared.ts';
import { outboxHook } from '../parts/events/emit.ts';
import { knownEventNames } from '../parts/events/event-names.ts';
import { registerEventRoutes } from '../parts/events/runtime.ts';
import { registerWebhookRoutes } from '../parts/events/webhook-routes.ts';
import { startWebhookWorker } from '../parts/events/webhook-worker.ts';
import { compileStateMachines } from '../parts/states/runtime.ts';
import { startTimerWorker, timersOnCreate } from '../parts/states/timers.ts';
import type { Plan } from '../plan/types.ts';
import type { Store } from '../storage/index.ts';
import type { HandlerInput, RuntimeContext } from './context.ts';
import { registerDocsPages } from './docs-pages.ts';
import { sendProblem, toApiError } from './errors.ts';
import { withTransaction } from './idempotency.ts';
import { registerJsonBody } from './json-body.ts';
import { compileRoutes, type Method, toFastifyPath } from './routes.ts';
import { createAjv } from './validator.ts';

export interface ServerOptions {
  readonly store: Store;
  /** pino level; 'silent' turns logging off. */
  readonly logLevel?: string;
  readonly now?: () => Date;
  /** How often due timers are looked for (default 1 s). */
  readonly timerPollMs?: number;
  /** How often due webhook retries are looked for (default 250 ms; new events are looked for at once). */
  readonly webhookPollMs?: number;
  /** The resolver webhook deliveries connect through (tests stub DNS with it); node's by default. */
  readonly lookup?: LookupFunction;
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;
const METHODS: readonly Method[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** Header names of apiKey schemes, redacted from logs like Authorization and Cookie. */
const apiKeyHeaders = (plan: Plan): string[] =>
  Object.values(plan.spec.auth?.schemes ?? {})
    .filter((s) => s.type === 'apiKey' && (s.in ?? 'header') === 'header')
    .map((s) => `req.headers["${(s.name ?? 'x-api-key').toLowerCase()}"]`);

/** Assembles the HTTP service from a plan. Everything is compiled here; requests only run what was built. */
export const createServer = async (plan: Plan, options: ServerOptions): Promise<FastifyInstance> => {
  const app = Fastify({
    logger: {
      level: options.logLevel ?? 'info',
      redact: {
        paths: ['req.headers.authorization', 'req.headers.cookie', ...apiKeyHeaders(plan)],
        censor: '[redacted]',
      },
    },
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: plan.limits.bodyBytes,
    requestTimeout: 30_000,
    connectionTimeout: 0,
    keepAliveTimeout: 5_000,
    forceCloseConnections: 'idle',
    return503OnClosing: true,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    routerOptions: { maxParamLength: 256, ignoreTrailingSlash: false },
  });
  app.server.headersTimeout = 20_000;

  const passwordFields = passwordFieldsOf(plan);
  const ctx: RuntimeContext = {
    plan,
    store: options.store,
    ajv: createAjv(),
    now: options.now ?? (() => new Date()),
    hooks: [],
    access: createAccess(plan, passwordFields),
    passwordFields,
  };
  const auth = createAuthenticator(plan, options.store, ctx.now, (message) => app.log.warn(message));
  ctx.hooks.push(timersOnCreate(ctx));
  let webhookWorker: ReturnType<typeof startWebhookWorker> | undefined;
  // New events are read by the delivery worker once their transaction has committed (the worker waits a moment).
  const outbox = outboxHook(ctx, () => webhookWorker?.wake());
  const emitDeclared = declaredEmitter(ctx, () => webhookWorker?.wake());
  if (outbox) ctx.hooks.push(outbox);
  const callbackUrls = callbackUrlHook(ctx);
  if (callbackUrls) ctx.hooks.push(callbackUrls);
  const machines = compileStateMachines(ctx, plan);
  const render = createProblemRenderer(plan.errors);
  const base = plan.service.basePath;

  registerJsonBody(app, { bodyLimit: plan.limits.bodyBytes, maxDepth: plan.limits.depth });

  // Callback-style hooks: an async hook costs a promise per request. Requests are counted here too (the
  // delivery worker slows down while they saturate the process): no second listener on the server.
  let served = 0;
  app.addHook('onRequest', (request, reply, done) => {
    served++;
    reply.header('x-request-id', request.id);
    done();
  });
  // Below 'info' (e.g. --log-level warn) the request lines would be dropped anyway: skip the hook entirely.
  if ((app.log as FastifyBaseLogger & { isLevelEnabled(level: string): boolean }).isLevelEnabled('info')) {
    app.addHook('onResponse', (request, reply, done) => {
      // One line per request; the path only, so credentials in a query string never reach the log.
      request.log.info(
        {
          method: request.method,
          path: request.url.split('?')[0],
          status: reply.statusCode,
          ms: Math.round(reply.elapsedTime),
        },
        'request',
      );
      done();
    });
  }
  app.setErrorHandler((error, request, reply) =>
    sendProblem(render, reply, toApiError(error, request), request.url.split('?')[0] ?? ''),
  );
  app.setNotFoundHandler((request, reply) =>
    sendProblem(render, reply, new ApiError('not_found', 'No such path.'), request.url.split('?')[0] ?? ''),
  );

  const toInput = (request: FastifyRequest, principal: Principal | undefined): HandlerInput => ({
    params: request.params as Record<string, string>,
    query: request.query as Record<string, string | string[] | undefined>,
    body: request.body,
    headers: request.headers,
    caller: principal?.subject ?? '',
    ...(principal ? { principal } : {}),
  });

  const principals = new WeakMap<FastifyRequest, Principal | undefined>();
  const defaultAccess = routeAccess(plan, { action: '_builtin', custom: true }).access;
  if (knownEventNames(plan.spec).length > 0) {
    const identifyDefault = async (request: FastifyRequest) =>
      auth.enabled ? auth.authenticate(request as FastifyRequest & AuthRequest, defaultAccess) : undefined;
    registerEventRoutes(app, ctx, identifyDefault);
    const webhooks = plan.spec.events?.webhooks?.enabled !== false;
    if (webhooks) registerWebhookRoutes(app, ctx, identifyDefault, () => webhookWorker?.refresh(), options.lookup);
    if (webhooks || hasCallbacks(plan)) {
      if (hasCallbacks(plan)) registerCallbackAdmin(app, ctx, auth);
      app.addHook('onReady', async () => {
        await ensureCallbackEndpoints(ctx);
        webhookWorker = startWebhookWorker(ctx, {
          ...(options.webhookPollMs !== undefined ? { pollMs: options.webhookPollMs } : {}),
          ...(options.lookup ? { lookup: options.lookup } : {}),
          requests: () => served,
        });
      });
      app.addHook('onClose', async () => webhookWorker?.stop());
    }
  }
  const methodsByPath = new Map<string, Set<Method>>();
  for (const route of await compileRoutes(ctx, plan, machines.routes, emitDeclared)) {
    const url = toFastifyPath(`${base}${route.path}`);
    const run = route.unsafe ? withTransaction(ctx, route.handler, route.method) : undefined;
    const { access, roles } = routeAccess(plan, route.kind);
    const checked = auth.enabled;
    /** Who is calling, with the route's roles checked; throws the catalogued 4xx. */
    const withRoles = (principal: Principal | undefined) => {
      if (roles.length > 0 && !principal?.roles.some((r) => roles.includes(r))) {
        throw new ApiError('forbidden', `This needs one of the roles ${roles.join(', ')}.`);
      }
      return principal;
    };
    const identify = (request: FastifyRequest): Principal | undefined | Promise<Principal | undefined> => {
      const found = auth.authenticate(request as FastifyRequest & AuthRequest, access);
      return found instanceof Promise ? found.then(withRoles) : withRoles(found);
    };
    // A route with a body authenticates before the body is read (onRequest): a caller who may not call learns
    // nothing from parsing or validation. A route without one does it first thing in its handler (no hook).
    const early = checked && route.method !== 'GET' && route.method !== 'DELETE';
    app.route({
      method: route.method,
      url,
      ...(early
        ? {
            onRequest: async (request: FastifyRequest) => {
              principals.set(request, await identify(request));
            },
          }
        : {}),
      handler: async (request, reply) => {
        let principal = !checked ? undefined : early ? principals.get(request) : identify(request);
        if (principal instanceof Promise) principal = await principal;
        const input = toInput(request, principal);
        const out = run ? await run(input, request.url) : await route.handler(input);
        reply.code(out.status);
        if (out.headers) reply.headers(out.headers);
        return reply.send(out.body);
      },
    });
    if (!methodsByPath.has(url)) methodsByPath.set(url, new Set());
    methodsByPath.get(url)?.add(route.method);
  }
  for (const [url, methods] of methodsByPath) {
    const allow = [...methods].join(', ');
    for (const method of METHODS.filter((m) => !methods.has(m))) {
      app.route({
        method,
        url,
        handler: async () => {
          throw new ApiError('method_not_allowed', `${method} is not allowed here; allowed: ${allow}.`, undefined, {
            allow,
          });
        },
      });
    }
  }

  // Built-in pages are public unless auth.public leaves them out; then they need the default requirement.
  const publicPages: readonly string[] = plan.spec.auth?.public ?? ['health', 'openapi', 'docs'];
  const guardOf = (page: BuiltInPage) =>
    auth.enabled && !publicPages.includes(page)
      ? async (request: FastifyRequest) => {
          await auth.authenticate(request as FastifyRequest & AuthRequest, defaultAccess);
        }
      : undefined;
  const healthGuard = guardOf('health');
  const healthOptions = healthGuard ? { onRequest: healthGuard } : {};
  app.get('/healthz', healthOptions, async (_request, reply) => reply.type('application/json').send('{"status":"ok"}'));
  app.get('/readyz', healthOptions, async (request, reply) => {
    try {
      await options.store.ping();
    } catch {
      return sendProblem(
        render,
        reply,
        new ApiError('storage_unavailable', 'The database does not answer.'),
        request.url,
      );
    }
    return reply.send({ status: 'ready', storage: options.store.durability() });
  });
  await registerDocsPages(app, plan, { openapi: guardOf('openapi'), docs: guardOf('docs') });
  if (auth.enabled) registerKeyAdmin(app, ctx, auth);
  if (machines.hasTimers) {
    let worker: ReturnType<typeof startTimerWorker> | undefined;
    app.addHook('onReady', async () => {
      worker = startTimerWorker(ctx, machines.fire, options.timerPollMs ?? 1000);
    });
    app.addHook('onClose', async () => worker?.stop());
  }
  return app;
};
