import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../parts/auth/principal.ts';
import type { ApiError } from '../parts/errors/api-error.ts';
import type { HandlerOutput } from './context.ts';
import type { PipelineRoute } from './route-spec.ts';

/**
 * The request lifecycle, in the order every route runs it: generated, custom and built-in routes alike.
 * `pipeline.ts` composes each route's steps from this list at start-up, and a request runs only the steps its
 * route was given. docs/serving.md ("The request lifecycle") draws the same list.
 */
export const LIFECYCLE = [
  /**
   * Fastify's router: an unknown path answers 404 `not_found`; a known path with another method 405. Before it, a
   * part's front door (front-door.ts) may decide a request from its address and route alone (the rate limit's 429).
   */
  'route',
  /** Who is calling (auth part), and whether they may call this route at all: its schemes and roles. */
  'authenticate',
  /** Rate limits and quotas (limits part). */
  'limit',
  /** The caller's API version (versioning part). */
  'version',
  /** The body: media type, size, UTF-8, JSON, depth, forbidden keys (body.ts); then any step that reshapes it. */
  'parse',
  /** The route's compiled validators, and the steps parts add. */
  'validate',
  /** Route-wide checks on the validated request; per-record rules run where the handler loads the record. */
  'authorise',
  /** Unsafe routes: one transaction, and the Idempotency-Key record written in it (idempotency.ts). */
  'transaction',
  /** The route's handler: load, per-record rules, persist, write hooks (outbox), the answer's body. */
  'handle',
  /** The answer: status, headers, body; steps may reshape it. Errors are rendered by the errors part. */
  'answer',
] as const;

export type Phase = (typeof LIFECYCLE)[number];

/** The phases a part may add steps to; the others are the pipeline's own. */
export type StepPhase = Exclude<Phase, 'route' | 'transaction' | 'handle'>;

/** Phases that run before the body is read (Fastify's onRequest; a GET's in its handler, which Fastify runs next): a
 * caller who may not call learns nothing more. */
export const BEFORE_BODY: readonly StepPhase[] = ['authenticate', 'limit', 'version'];
/** Phases that run after the body is read, in the route's handler. */
export const AFTER_BODY: readonly StepPhase[] = ['parse', 'validate', 'authorise'];

/** One request on its way through the pipeline. Steps read and fill it; the handler sees it as a HandlerInput. */
export interface Exchange {
  readonly route: PipelineRoute;
  readonly request: FastifyRequest;
  readonly reply: FastifyReply;
  principal: Principal | undefined;
  /** Verifies the caller's credentials again (a long-lived stream re-checks them); set by the authenticate step. */
  reauthenticate?: () => Promise<Principal | undefined>;
  /** The parsed body; undefined when the request had none. */
  body: unknown;
  /** The API version the request is served in (versioning part). */
  version?: string;
  /** Renames an error into the caller's API version (versioning part); undefined in the newest. */
  reshapeError?: (error: ApiError) => ApiError;
  /** Set by the handler; answer steps may reshape it. */
  output?: HandlerOutput;
  /**
   * Set by a step that answered the request itself (a refusal sent from parts prepared at start-up, cheaper than a
   * thrown error): no later step runs, and the route's handler is never called.
   */
  answered?: true;
}

/**
 * The exchange of one request, made with `new`: V8 gives an object literal an allocation site and may pretenure it
 * (make its objects in the old generation from then on) when one scavenge finds most of them alive, as one under load
 * can at random (h/h32: about one server process in five, 3 of 18 on the bench). From then on every exchange is old,
 * and the request, reply and answer it points to outlive each scavenge until the next full collection: 2-3 MB
 * promoted per scavenge, 30-100 µs more CPU per request for the rest of the process. Instances of a class have no allocation site. Every
 * member is set here, so that every exchange has the one shape.
 */
export class RequestExchange implements Exchange {
  principal: Principal | undefined = undefined;
  reauthenticate: (() => Promise<Principal | undefined>) | undefined = undefined;
  body: unknown = undefined;
  version: string | undefined = undefined;
  reshapeError: ((error: ApiError) => ApiError) | undefined = undefined;
  output: HandlerOutput | undefined = undefined;
  answered: true | undefined = undefined;
  constructor(
    readonly route: PipelineRoute,
    readonly request: FastifyRequest,
    readonly reply: FastifyReply,
  ) {}
}

/** A step of one phase for one route: synchronous when it can be, so a route that needs no I/O makes no promise. */
export type Step = (exchange: Exchange) => void | Promise<void>;

/** Runs steps in order, staying synchronous until one of them returns a promise; stops once one answered. */
export const runSteps = (steps: readonly Step[], exchange: Exchange, from = 0): void | Promise<void> => {
  for (let i = from; i < steps.length && !exchange.answered; i++) {
    const pending = (steps[i] as Step)(exchange);
    if (pending) return pending.then(() => runSteps(steps, exchange, i + 1));
  }
};
