import type { FastifyReply } from 'fastify';
import type { AccessControl } from '../parts/auth/access.ts';
import type { Principal } from '../parts/auth/principal.ts';
import type { CounterConnection } from '../parts/limits/redis-connection.ts';
import type { Plan, ResourcePlan, TransitionPlan } from '../plan/types.ts';
import type { CounterStore, Row, Store } from '../storage/index.ts';
import type { Deadline } from './deadlines.ts';
import type { SchemaCompiler } from './validator.ts';

/**
 * Something that happened to a record, inside the transaction that made it happen. `apiVersion` is the version of
 * the request that made it (versioning part; undefined for a timer): callbacks are rendered in it.
 */
export type WriteEvent = (
  | {
      readonly kind: 'created';
      readonly resource: ResourcePlan;
      readonly after: Row;
      readonly actor: string;
      /** The record serialised whole, when the creator was answered with all of it: written once, used twice. */
      readonly json?: string;
    }
  | {
      readonly kind: 'updated';
      readonly resource: ResourcePlan;
      readonly before: Row;
      readonly after: Row;
      readonly actor: string;
    }
  | { readonly kind: 'deleted'; readonly resource: ResourcePlan; readonly before: Row; readonly actor: string }
  | {
      readonly kind: 'transitioned';
      readonly resource: ResourcePlan;
      readonly before: Row;
      readonly after: Row;
      readonly transition: TransitionPlan;
      readonly input: unknown;
      readonly actor: string;
    }
) & { readonly apiVersion?: string };

/**
 * Where parts attach to writes. Every hook runs inside the write's transaction, after the change:
 * if a hook throws, the change and everything the other hooks wrote roll back together.
 */
export type WriteHook = (event: WriteEvent) => void | Promise<void>;

/** What every compiled handler shares: the plan, the store, the validator factory and the clock. */
export interface RuntimeContext {
  readonly plan: Plan;
  readonly store: Store;
  /** Where validators are compiled from (on first use, or in the background once the server listens). */
  readonly schemas: SchemaCompiler;
  readonly now: () => Date;
  readonly hooks: WriteHook[];
  /** Per-record rules, owners and readable fields (auth part). */
  readonly access: AccessControl;
  /** Password fields of user stores, per resource: hashed before they are stored, never shown. */
  readonly passwordFields: ReadonlyMap<string, ReadonlySet<string>>;
  /** Fixed-window counters (the failed-login limiter): in Redis when the server has one, else the store's. */
  readonly counters: CounterStore;
  /** Redis for counters shared by instances (NINEFOLD_REDIS_URL or `limits.store`), when configured. */
  readonly counterConnection?: CounterConnection;
}

/** The request's API version as a write event carries it (nothing when the spec declares no versioning). */
export const versionOf = (input: { readonly apiVersion?: string }): { apiVersion?: string } =>
  input.apiVersion ? { apiVersion: input.apiVersion } : {};

/** Runs the write hooks in order, staying synchronous (no promise) until one of them returns a promise. */
export const runHooks = (ctx: RuntimeContext, event: WriteEvent, from = 0): void | Promise<void> => {
  for (let i = from; i < ctx.hooks.length; i++) {
    const pending = (ctx.hooks[i] as WriteHook)(event);
    if (pending) return pending.then(() => runHooks(ctx, event, i + 1));
  }
};

/** A request as the parts see it, free of Fastify types. */
export interface HandlerInput {
  readonly params: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: unknown;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** Who is calling: the principal's subject; '' for anonymous. */
  readonly caller: string;
  /** The authenticated caller; undefined on a public route called without credentials. */
  readonly principal?: Principal;
  /** The client's address. */
  readonly ip: string;
  /** The API version the request is served in (versioning part); undefined when the spec declares none. */
  readonly apiVersion?: string;
  /** The request's time budget: custom handlers may watch `deadline.signal`. */
  readonly deadline?: Deadline;
  /** Verifies the caller's credentials again (a long-lived stream re-checks them); undefined on a public spec. */
  readonly reauthenticate?: () => Promise<Principal | undefined>;
}

export interface HandlerOutput {
  readonly status: number;
  /** Already serialised JSON, or undefined for an empty body. */
  readonly body?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** Runs once the request's transaction has committed (tell a worker about what was written). */
  readonly afterCommit?: () => void;
  /** The handler answers on the connection itself, for as long as it likes (the event stream). */
  readonly takeOver?: (reply: FastifyReply) => void;
  /**
   * Answered as soon as the handler is done, not with the rest of the turn's answers (runtime/answer-turn.ts): a
   * stream's start, whose hold on a stream slot ends only through its own close handling.
   */
  readonly immediate?: boolean;
}

export type Handler = (input: HandlerInput) => Promise<HandlerOutput>;
