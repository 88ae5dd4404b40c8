import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../parts/errors/api-error.ts';
import type { Step } from './lifecycle.ts';
import type { BodyKind } from './route-spec.ts';

const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * One pass over a parsed body, with an explicit stack so a deep document cannot overflow ours:
 * depth cap, array length cap, forbidden prototype keys, strings that cannot be stored, numbers JSON cannot carry.
 */
export const inspectJson = (root: unknown, maxDepth: number, maxItems = Infinity): ApiError | undefined => {
  const stack: Array<[unknown, number]> = [[root, 1]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop() as [unknown, number];
    if (typeof value === 'string') {
      if (value.includes('\u0000') || !value.isWellFormed())
        return new ApiError('invalid_string', 'A string contains NUL or a lone surrogate.');
      continue;
    }
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) return new ApiError('number_out_of_range', 'A number is too large to represent.');
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (depth > maxDepth) return new ApiError('too_deep', `The body is nested more than ${maxDepth} levels deep.`);
    if (Array.isArray(value)) {
      if (value.length > maxItems)
        return new ApiError('too_many_items', `An array in the body has more than ${maxItems} items.`);
      for (const item of value) stack.push([item, depth + 1]);
      continue;
    }
    for (const key of Object.keys(value)) {
      if (
        key === '__proto__' ||
        (key === 'constructor' && typeof (value as Record<string, unknown>)[key] === 'object')
      ) {
        return new ApiError('forbidden_key', `The key "${key}" is not allowed.`);
      }
      if (key.includes('\u0000') || !key.isWellFormed())
        return new ApiError('invalid_string', 'A key contains NUL or a lone surrogate.');
      stack.push([(value as Record<string, unknown>)[key], depth + 1]);
    }
  }
  return undefined;
};

/**
 * Bodies are only read here (bytes, up to the size limit, while streaming); what they mean is decided by the
 * route's parse step, after authentication and routing have answered. So a caller without credentials, or a
 * request for an unknown path, is answered 401 or 404 whatever body it sends.
 */
export const registerBodyReader = (app: FastifyInstance, bodyLimit: number) => {
  app.removeAllContentTypeParsers();
  const read = (_request: unknown, body: Buffer | string, done: (error: null, body: Buffer | string) => void) =>
    done(null, body);
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit }, read);
  // The usual media type by name too: Fastify remembers the parser it found for a Content-Type only when the type
  // has one of its own, and parses the header anew for every request that only the catch-all takes.
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit }, read);
};

const JSON_MEDIA_TYPE = /^application\/(?:[a-z0-9.!#$&^_-]+\+)?json$/;
const PARAMETER = /;\s*([^=;\s]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^;\s]*)/g;

/** Whether a Content-Type is JSON in UTF-8: `application/json` or `application/<x>+json`, charset absent or UTF-8. */
const checkMediaType = (header: string | undefined) => {
  const semicolon = header?.indexOf(';') ?? -1;
  const type = (semicolon < 0 ? header : header?.slice(0, semicolon))?.trim().toLowerCase();
  if (!type || !JSON_MEDIA_TYPE.test(type)) {
    throw new ApiError('unsupported_media_type', 'Send the body as application/json.');
  }
  if (semicolon < 0 || !header) return;
  for (const [, name, value] of header.slice(semicolon).matchAll(PARAMETER)) {
    if (name?.toLowerCase() !== 'charset') continue;
    const charset = (value ?? '').replace(/^"|"$/g, '').toLowerCase();
    if (charset !== 'utf-8' && charset !== 'utf8')
      throw new ApiError('unsupported_media_type', 'JSON bodies must be UTF-8.');
  }
};

/** The JSON a request carries, or undefined when it carries none; throws the catalogued 4xx. */
const parseJsonBody = (request: FastifyRequest, required: boolean, maxDepth: number, maxItems: number): unknown => {
  const raw = request.body as Buffer | undefined;
  const type = request.headers['content-type'];
  if (raw === undefined || raw.length === 0) {
    // An empty body declared as JSON is not JSON; a route whose body is optional takes it as no body.
    if (required && type !== undefined) throw new ApiError('invalid_json', 'The body is empty.');
    return undefined;
  }
  checkMediaType(type);
  const encoding = request.headers['content-encoding'];
  if (encoding && encoding !== 'identity') {
    throw new ApiError('unsupported_media_type', 'Content-Encoding is not accepted; send the body uncompressed.');
  }
  let text: string;
  try {
    text = decoder.decode(raw);
  } catch {
    throw new ApiError('invalid_string', 'The body is not valid UTF-8.');
  }
  let parsed: unknown;
  try {
    // RFC 8259 JSON only. Duplicate keys: the last one wins, and validation and storage see that same value.
    parsed = JSON.parse(text);
  } catch {
    throw new ApiError('invalid_json', 'The body is not valid JSON.');
  }
  const problem = inspectJson(parsed, maxDepth, maxItems);
  if (problem) throw problem;
  return parsed;
};

/** The parse step of a route: what it makes of the bytes read for it. A route that takes no body ignores them. */
export const bodyStep = (kind: BodyKind, maxDepth: number, maxItems: number): Step | undefined => {
  if (kind === 'none') return undefined;
  const required = kind === 'json';
  return (exchange) => {
    exchange.body = parseJsonBody(exchange.request, required, maxDepth, maxItems);
  };
};
