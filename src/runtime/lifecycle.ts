/**
 * The request lifecycle, in order. Each phase is compiled per route at start-up from the plan;
 * a request runs only the phases its route needs. docs/lifecycle.md draws the same list.
 */
export const LIFECYCLE = [
  'route', // Fastify's router (find-my-way); unknown path → 404 not_found, known path + other method → 405
  'negotiate-version', // versioning part (issue 9): pick the caller's API version
  'authenticate', // auth part (issue 5)
  'rate-limit', // limits part (issue 8)
  'parse', // json-body.ts: size limit while streaming, UTF-8, JSON, depth, forbidden keys
  'validate', // validator.ts: compiled ajv per route; read-only, unknown and invalid fields
  'authorise', // auth part (issue 5)
  'load', // the record named by the path, scoped to its parent
  'persist', // one transaction: the change, its idempotency record (and, later, its outbox event)
  'transform', // versioning part: shape the answer for the caller's version
  'serialise', // fast-json-stringify per resource
  'respond', // ETag, Location, X-Request-Id; errors rendered by the errors part
] as const;

export type Phase = (typeof LIFECYCLE)[number];
