import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RouteKind } from '../parts/auth/route-access.ts';
import type { ApiError } from '../parts/errors/api-error.ts';
import type { Plan } from '../plan/types.ts';
import type { CannedProblem, RawProblem } from './canned-problem.ts';
import type { RuntimeContext, WriteHook } from './context.ts';
import type { FrontDoor, FrontDoorHost } from './front-door.ts';
import type { Step, StepPhase } from './lifecycle.ts';
import type { PipelineRoute, RouteSpec } from './route-spec.ts';
import type { ServerOptions } from './server-options.ts';
import type { RunningWorker, WorkerHealth } from './workers.ts';

/** The log a part writes to (pino's shape, without its types). */
export interface PartLog {
  info(object: Record<string, unknown>, message: string): void;
  warn(object: Record<string, unknown>, message: string): void;
  error(object: Record<string, unknown>, message: string): void;
}

/**
 * What the server offers a part while it installs itself. Everything a part adds goes through here, so that the
 * pipeline alone decides how a route runs: a part never registers a Fastify route or hook of its own.
 */
export interface PartHost {
  readonly plan: Plan;
  readonly ctx: RuntimeContext;
  readonly options: ServerOptions;
  readonly log: PartLog;
  /** Adds a route; it runs the whole lifecycle, with the steps every part gives it. */
  route(route: RouteSpec): void;
  /**
   * Adds a step to one phase of every route: `compile` runs once per route at start-up and returns the route's
   * step, or undefined when the route has nothing to do in this phase (then it costs nothing per request).
   */
  step(phase: StepPhase, compile: (route: PipelineRoute) => Step | undefined): void;
  /** A hook every write runs inside its transaction, after the change (the outbox, timers, …). */
  writeHook(hook: WriteHook): void;
  /** Background work started once the server is ready and stopped when it closes; its health shows in /readyz. */
  worker(name: string, start: (health: WorkerHealth) => RunningWorker | Promise<RunningWorker>): void;
  /** The health reporter of background work the part starts itself (the stream's outbox watcher). */
  health(name: string): WorkerHealth;
  /** Runs when the server starts closing, before connections end (open streams say goodbye here). */
  onClose(fn: () => void | Promise<void>): void;
  /**
   * The before-body steps (authenticate, limit, version) of a route served by a third-party plugin (the API
   * reference page), as one Fastify onRequest hook, so that those routes are guarded like every other.
   */
  beforeBody(kind: RouteKind, operation: string): (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
  /**
   * A problem a step answers often (a refusal), rendered once for the route, the errors part's way: the step sends it
   * and sets `exchange.answered`, which ends the request's way through the pipeline.
   */
  cannedProblem(route: PipelineRoute, error: ApiError): CannedProblem;
  /** The same problem, for a front door: written on Node's response. */
  rawProblem(route: PipelineRoute, error: ApiError): RawProblem;
  /**
   * The lifecycle's first step, run before Fastify routes a request (front-door.ts): `compile` gets every route of
   * the pipeline once they are all declared, and returns the door, or undefined when it has nothing to decide there.
   * At most one part installs one.
   */
  frontDoor(compile: (routes: readonly PipelineRoute[], host: FrontDoorHost) => FrontDoor | undefined): void;
  /** Registers a third-party Fastify plugin (the API reference page); guard its routes with `beforeBody`. */
  mount(register: (app: FastifyInstance) => Promise<void>): void;
  /** Requests received so far (the delivery worker slows down while they saturate the process). */
  requests(): number;
  /** The health of every worker, for /readyz. */
  workers(): { readonly failing: boolean; readonly report: Readonly<Record<string, unknown>> };
}

/** One part of the server: installs its routes, steps, write hooks and workers through the host. */
export interface ServerPart {
  readonly name: string;
  install(host: PartHost): void | Promise<void>;
}
