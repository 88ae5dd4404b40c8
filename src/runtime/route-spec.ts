import type { RouteKind } from '../parts/auth/route-access.ts';
import type { Handler, HandlerInput } from './context.ts';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * What a route reads as its body. `none`: anything sent is ignored (DELETE, history); `json`: a JSON body the
 * route validates (create, update); `optional`: a JSON body when one is sent (transitions take their input so).
 */
export type BodyKind = 'none' | 'json' | 'optional';

/** A route as a part declares it to the pipeline: generated, custom or built in, all alike. */
export interface RouteSpec {
  readonly method: Method;
  /** Path template with {params}, under the spec's base path unless `root` (built-in pages live at the root). */
  readonly path: string;
  readonly root?: boolean;
  /** A stable name for logs, limits and documents: `Order.create`, `Order.place`, `customerSummary`, `webhooks.create`. */
  readonly operation: string;
  /** What the route does, for access control: the auth part turns it into schemes and roles. */
  readonly kind: RouteKind;
  readonly body: BodyKind;
  /** One transaction, with Idempotency-Key. Default: every method but GET. */
  readonly transaction?: boolean;
  /** Checks before the transaction (I/O allowed: a DNS lookup, say); throws the catalogued error. */
  readonly validate?: (input: HandlerInput) => void | Promise<void>;
  readonly handler: Handler;
}

/** A route as the pipeline compiled it. */
export interface PipelineRoute extends RouteSpec {
  /** The full path template, base path included, with {params}. */
  readonly template: string;
  readonly transaction: boolean;
}

/** The longest path parameter the router matches (longer: 404, as for an id no record has). */
export const MAX_PARAM_LENGTH = 256;

/** {id} → :id for Fastify's router. */
export const toFastifyPath = (path: string): string => path.replace(/\{(\w+)\}/g, ':$1');

/** Fastify's router options (server.ts), shared with the front door's router so that both route a path alike. */
export const ROUTER_OPTIONS = {
  maxParamLength: MAX_PARAM_LENGTH,
  ignoreTrailingSlash: false,
  useSemicolonDelimiter: false,
};
