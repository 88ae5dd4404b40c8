import type { FastifyInstance } from 'fastify';
import { ApiError } from '../parts/errors/api-error.ts';

const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * One pass over a parsed body, with an explicit stack so a deep document cannot overflow ours:
 * depth cap, forbidden prototype keys, strings that cannot be stored, numbers JSON cannot carry.
 */
export const inspectJson = (root: unknown, maxDepth: number): ApiError | undefined => {
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
 * The JSON body parser: UTF-8 only (strict decoding), no content encodings, RFC 8259 JSON only
 * (duplicate keys: the last one wins, and validation and storage see that same value).
 */
export const registerJsonBody = (app: FastifyInstance, options: { bodyLimit: number; maxDepth: number }) => {
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser(
    /^application\/([a-z0-9.+-]*\+)?json$/,
    { parseAs: 'buffer', bodyLimit: options.bodyLimit },
    (request, body, done) => {
      const type = request.headers['content-type'] ?? '';
      const charset = /;\s*charset=("?)([^";]+)\1/i.exec(type)?.[2]?.toLowerCase();
      if (charset && charset !== 'utf-8' && charset !== 'utf8') {
        done(new ApiError('unsupported_media_type', 'JSON bodies must be UTF-8.'), undefined);
        return;
      }
      const encoding = request.headers['content-encoding'];
      if (encoding && encoding !== 'identity') {
        done(
          new ApiError('unsupported_media_type', 'Content-Encoding is not accepted; send the body uncompressed.'),
          undefined,
        );
        return;
      }
      const buffer = body as Buffer;
      let text: string;
      try {
        text = decoder.decode(buffer);
      } catch {
        done(new ApiError('invalid_string', 'The body is not valid UTF-8.'), undefined);
        return;
      }
      if (text.length === 0) {
        done(new ApiError('invalid_json', 'The body is empty.'), undefined);
        return;
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        done(new ApiError('invalid_json', 'The body is not valid JSON.'), undefined);
        return;
      }
      const problem = inspectJson(parsed, options.maxDepth);
      done(problem ?? null, problem ? undefined : parsed);
    },
  );
};
