import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RouteKind } from '../parts/auth/route-access.ts';
import { routeKey } from '../parts/endpoints/routes.ts';
import { ApiError } from '../parts/errors/api-error.ts';
import type { ProblemContext, ProblemRenderer } from '../parts/errors/runtime.ts';
import { requestAddress } from '../parts/limits/trusted-proxies.ts';
import type { Plan } from '../plan/types.ts';
import type { AnswerTurn } from './answer-turn.ts';
import { bodyStep } from './body.ts';
import { cannedProblem, rawProblem } from './canned-problem.ts';
import type { HandlerInput, HandlerOutput, RuntimeContext } from './context.ts';
import { createDeadlines, type Deadline } from './deadlines.ts';
import { sendProblem, toApiError } from './errors.ts';
import type { FrontDoor, FrontDoorHost } from './front-door.ts';
import { withTransaction } from './idempotency.ts';
import {
  AFTER_BODY,
  BEFORE_BODY,
  type Exchange,
  RequestExchange,
  runSteps,
  type Step,
  type StepPhase,
} from './lifecycle.ts';
import type { PartHost } from './part.ts';
import { MAX_PARAM_LENGTH, type Method, type PipelineRoute, type RouteSpec, toFastifyPath } from './route-spec.ts';
import type { ServerOptions } from './server-options.ts';
import type { RunningWorker, WorkerHealth, WorkerRegistry } from './workers.ts';

/** The methods a known path answers 405 for when it does not serve them (others are 404, as for any path). */
const ANSWERED_405 = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']);

type StepCompiler = (route: PipelineRoute) => Step | undefined;

declare module 'fastify' {
  interface FastifyRequest {
    /** This request's way through the pipeline (set by its first step). */
    exchange: Exchange | null;
  }
}

const pathOf = (request: FastifyRequest) => request.url.split('?')[0] ?? '';
/**
 * Where an error happened, for its payload: the path, and the resource of the route (`Issue.create` → Issue) with
 * its envelope, so a per-field payload names `email`, not `user.email`.
 */
const routeWhere = (plan: Plan, route: PipelineRoute | undefined): Omit<ProblemContext, 'instance'> => {
  const operation = route?.operation;
  const resource = operation && /^[A-Z]/.test(operation) ? operation.split('.')[0] : undefined;
  const envelope = resource ? plan.resourcesByName.get(resource)?.wire.envelope : undefined;
  return { ...(resource ? { resource } : {}), ...(envelope ? { envelope } : {}) };
};
const whereOf = (plan: Plan, request: FastifyRequest): ProblemContext => ({
  instance: pathOf(request),
  ...routeWhere(plan, request.exchange?.route),
});
const timedOut = () =>
  new ApiError(
    'timeout',
    'The request took longer than its time budget; nothing it did was kept.',
    undefined,
    undefined,
    {
      'retry-after': '1',
    },
  );

/**
 * The one pipeline every route runs: parts declare routes and steps through the host, and `build` compiles each
 * route's steps in lifecycle order, once. Steps before the body is read run in the route's onRequest hook (one
 * hook, synchronous when every step is), the rest in its handler; a GET, which has no body, runs them all in its
 * handler.
 */
export const createPipeline = (
  app: FastifyInstance,
  ctx: RuntimeContext,
  options: ServerOptions,
  parts: {
    render: ProblemRenderer;
    registry: WorkerRegistry;
    requests: () => number;
    door: FrontDoorHost;
    turn: AnswerTurn;
  },
) => {
  const { plan } = ctx;
  const specs: RouteSpec[] = [];
  const compilers = new Map<StepPhase, StepCompiler[]>();
  const mounts: Array<(app: FastifyInstance) => Promise<void>> = [];
  const workers: Array<{ name: string; start: (health: WorkerHealth) => RunningWorker | Promise<RunningWorker> }> = [];
  const log = app.log as FastifyBaseLogger;
  let frontDoorOf: ((routes: readonly PipelineRoute[], host: FrontDoorHost) => FrontDoor | undefined) | undefined;
  let frontDoor: FrontDoor | undefined;

  const compileRoute = (spec: RouteSpec): PipelineRoute => ({
    ...spec,
    template: `${spec.root ? '' : plan.service.basePath}${spec.path}`,
    transaction: spec.transaction ?? spec.method !== 'GET',
  });
  const stepsOf = (route: PipelineRoute, phases: readonly StepPhase[]): Step[] => {
    const steps: Step[] = [];
    for (const phase of phases) {
      if (phase === 'parse') {
        const parse = bodyStep(route.body, plan.limits.depth, plan.limits.guards.arrayItems);
        if (parse) steps.push(parse);
      }
      for (const compile of compilers.get(phase) ?? []) {
        const step = compile(route);
        if (step) steps.push(step);
      }
    }
    return steps;
  };
  const start = (route: PipelineRoute, request: FastifyRequest, reply: FastifyReply): Exchange => {
    const exchange = new RequestExchange(route, request, reply);
    request.exchange = exchange;
    return exchange;
  };
  /** The before-body steps as one onRequest hook; undefined when the route has none. */
  const onRequestOf = (route: PipelineRoute, early: readonly Step[]) => {
    if (early.length === 0) return undefined;
    return (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
      let pending: void | Promise<void>;
      try {
        pending = runSteps(early, start(route, request, reply));
      } catch (error) {
        done(error as Error);
        return;
      }
      // A step that answered the request itself ends it here: Fastify is not told to go on.
      if (pending) pending.then(() => request.exchange?.answered || done(), done);
      else if (!request.exchange?.answered) done();
    };
  };
  const { guards } = plan.limits;
  const deadlines = createDeadlines(Math.min(plan.limits.requestTimeoutMs, ...guards.timeoutMs.values()));
  app.addHook('onClose', async () => deadlines.stop());
  /** Past a request's budget it is answered 503 at once; what the handler still does cannot commit. */
  const expire = (reply: FastifyReply) => {
    if (!reply.sent) sendProblem(parts.render, reply, timedOut(), whereOf(plan, reply.request));
  };
  // One shape for every request (the optional members present, undefined when unset): the handlers' property
  // loads stay monomorphic, and no object is made to be spread.
  // The client's address as every per-address limit sees it: behind a trusted proxy, the client the proxy names.
  const clientIp = requestAddress(plan.limits.trustProxy);
  const inputOf = (exchange: Exchange, deadline: Deadline): HandlerInput => {
    const { request, principal } = exchange;
    return {
      deadline,
      params: request.params as Record<string, string>,
      query: request.query as Record<string, string | string[] | undefined>,
      body: exchange.body,
      headers: request.headers,
      caller: principal?.subject ?? '',
      ip: clientIp(request),
      principal,
      apiVersion: exchange.version || undefined,
      reauthenticate: exchange.reauthenticate,
    };
  };
  const answer = (reply: FastifyReply, out: HandlerOutput) => {
    reply.code(out.status);
    if (out.headers) reply.headers(out.headers);
    if (out.takeOver) {
      out.takeOver(reply);
      return reply;
    }
    return reply.send(out.body);
  };
  /** An error as the error handler answers it: catalogued, and in the route's own error shape. */
  const answerError = (error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const problem = toApiError(error, request);
    const reshape = request.exchange?.reshapeError;
    return sendProblem(parts.render, reply, reshape ? reshape(problem) : problem, whereOf(plan, request));
  };
  /** The handler's answer, written with the rest of the turn's (answer-turn.ts); a failure to write it is answered. */
  const answerNow = (reply: FastifyReply, out: HandlerOutput) => {
    try {
      answer(reply, out);
    } catch (error) {
      if (!reply.sent) answerError(error, reply.request, reply);
    }
  };
  /** A deferred answer, written at the turn's end; then the handler's promise settles (`written`). */
  const answerLater = (reply: FastifyReply, written: (value: undefined) => void) => {
    try {
      answerNow(reply, reply.request.exchange?.output as HandlerOutput);
    } finally {
      written(undefined);
    }
  };

  const register = (route: PipelineRoute) => {
    const early = stepsOf(route, BEFORE_BODY);
    // Fastify reads no body for a GET (nor for the HEAD it serves with it): it calls the handler right after the
    // onRequest hooks. So a GET's before-body steps run at the head of its handler, still before anything of a body,
    // and a limited or authenticated GET pays no route hook of its own (the hook runner's call, a closure, a runSteps).
    const bodyless = route.method === 'GET';
    const afterBody = bodyless ? [...early, ...stepsOf(route, AFTER_BODY)] : stepsOf(route, AFTER_BODY);
    const answerSteps = stepsOf(route, ['answer']);
    const validate = route.validate;
    const run = route.transaction
      ? withTransaction(ctx, route.handler, route.method)
      : (input: HandlerInput) => route.handler(input);
    const onRequest = bodyless ? undefined : onRequestOf(route, early);
    // A transaction the store ends with the turn's others is answered as it ends: those answers leave together already.
    const settled = route.transaction && ctx.store.settlesTogether;
    // Per-route limits are declared as "METHOD /path" under the base path: declared and built-in API routes alike.
    const key = route.root ? '' : routeKey(route.method, route.path);
    const budgetMs = guards.timeoutMs.get(key) ?? plan.limits.requestTimeoutMs;
    const bodyLimit = guards.bodyBytes.get(key);
    const critical =
      route.kind.builtIn === 'health' ? 'always' : guards.overload?.critical.has(key) === true ? 'reserved' : undefined;
    // The route table at debug level: what is served, to compare with what the documents say (test/openapi-routes).
    log.debug({ method: route.method, path: route.template, operation: route.operation }, 'route');
    app.route({
      method: route.method,
      url: toFastifyPath(route.template),
      ...(onRequest ? { onRequest } : {}),
      ...(bodyLimit !== undefined ? { bodyLimit } : {}),
      ...(critical ? { config: { critical } } : {}),
      handler: async (request, reply) => {
        const exchange = request.exchange ?? start(route, request, reply);
        const pending = runSteps(afterBody, exchange);
        if (pending) await pending;
        if (exchange.answered) return reply;
        const deadline = deadlines.open(budgetMs, reply.elapsedTime, expire, reply);
        try {
          const input = inputOf(exchange, deadline);
          if (validate) await validate(input);
          exchange.output = await run(input, request.url);
        } catch (error) {
          if (deadline.expired) return reply;
          throw error;
        } finally {
          deadlines.close(deadline);
        }
        if (deadline.expired) return reply;
        exchange.output.afterCommit?.();
        if (answerSteps.length) await runSteps(answerSteps, exchange);
        // A take-over answers on the connection for as long as it likes: the reply (Reply.then) settles when it ends.
        if (settled || exchange.output.immediate || exchange.output.takeOver) {
          answer(reply, exchange.output);
          return reply;
        }
        // Not `return reply`: settling an async function with the reply calls Reply.then, which, the answer not being
        // sent yet, watches the response with end-of-stream listeners (five listeners added and removed a request).
        // This promise settles once the answer is written; Fastify then finds the reply sent and does nothing more.
        return new Promise<undefined>((written) => parts.turn.later(answerLater, reply, written));
      },
    });
  };

  /**
   * The methods each known path serves, for a 405 with Allow when a request names a known path with another method.
   * Asked by the not-found answer, so the router holds only the routes that are served (a route for every other
   * method of every path was most of the router's construction at start-up); compiled on the first miss.
   */
  const allowedMethods = (routes: readonly PipelineRoute[]): ((url: string) => string | undefined) => {
    let table: { readonly pattern: RegExp; readonly allow: string }[] | undefined;
    const compile = () => {
      const methodsByUrl = new Map<string, Set<Method>>();
      for (const route of routes) {
        const url = toFastifyPath(route.template);
        methodsByUrl.set(url, (methodsByUrl.get(url) ?? new Set<Method>()).add(route.method));
      }
      // A parameter matches what the router's would: one path segment, of 1 to maxParamLength characters.
      return [...methodsByUrl].map(([url, methods]) => ({
        pattern: new RegExp(
          `^${url
            .split(/(:\w+)/)
            .map((part) =>
              part.startsWith(':') ? `[^/]{1,${MAX_PARAM_LENGTH}}` : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
            )
            .join('')}$`,
        ),
        allow: [...methods].join(', '),
      }));
    };
    return (url) => {
      table ??= compile();
      const path = url.split('?')[0] ?? '';
      return table.find((entry) => entry.pattern.test(path))?.allow;
    };
  };

  const host: PartHost = {
    plan,
    ctx,
    options,
    log,
    route: (spec) => void specs.push(spec),
    step(phase, compile) {
      compilers.set(phase, [...(compilers.get(phase) ?? []), compile]);
    },
    writeHook: (hook) => void ctx.hooks.push(hook),
    worker: (name, startWorker) => void workers.push({ name, start: startWorker }),
    health: (name) => parts.registry.healthOf(name),
    onClose: (fn) => void app.addHook('preClose', async () => fn()),
    beforeBody(kind: RouteKind, operation: string) {
      const route = compileRoute({
        method: 'GET',
        path: '',
        root: true,
        operation,
        kind,
        body: 'none',
        handler: async () => ({ status: 204 }),
      });
      const early = stepsOf(route, BEFORE_BODY);
      return async (request: FastifyRequest, reply: FastifyReply) => {
        if (early.length) await runSteps(early, start(route, request, reply));
        if (request.exchange?.answered) return reply;
      };
    },
    cannedProblem: (route, error) => cannedProblem(parts.render, error, routeWhere(plan, route)),
    rawProblem: (route, error) => rawProblem(parts.render, error, routeWhere(plan, route), parts.turn),
    frontDoor(compile) {
      if (frontDoorOf) throw new Error('Only one part may install a front door.');
      frontDoorOf = compile;
    },
    mount: (fn) => void mounts.push(fn),
    requests: parts.requests,
    workers: () => ({ failing: parts.registry.failing(), report: parts.registry.report() }),
  };

  /** Registers every route with its compiled steps, the 405s, the error and not-found answers, and the workers. */
  const build = async () => {
    // Before any route: a route keeps the error handler its context had when it was registered.
    app.setErrorHandler((error, request, reply) => answerError(error, request, reply));
    const routes = specs.map(compileRoute);
    const allowedOn = allowedMethods(routes);
    app.setNotFoundHandler((request, reply) => {
      // A known path with another method: 405 with Allow, before anything else (no authentication, no body).
      const allow = ANSWERED_405.has(request.method) ? allowedOn(request.url) : undefined;
      const error = allow
        ? new ApiError('method_not_allowed', `${request.method} is not allowed here; allowed: ${allow}.`, undefined, {
            allow,
          })
        : new ApiError('not_found', 'No such path.');
      return sendProblem(parts.render, reply, error, pathOf(request));
    });
    for (const route of routes) register(route);
    frontDoor = frontDoorOf?.(routes, parts.door);
    for (const mount of mounts) await mount(app);
    for (const { name, start: startWorker } of workers) {
      let running: RunningWorker | undefined;
      app.addHook('onReady', async () => {
        running = await startWorker(parts.registry.healthOf(name));
      });
      options.drain?.onCut(() => running?.cut?.());
      app.addHook('onClose', async () => {
        await running?.stop();
        parts.registry.stopped(name);
      });
    }
  };

  /** The front door a part installed, once built; undefined when none (every request goes to Fastify). */
  return { host, build, frontDoor: () => frontDoor };
};
