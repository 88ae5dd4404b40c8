import { createHash } from 'node:crypto';
import { ApiError } from '../parts/errors/api-error.ts';
import type { Handler, HandlerInput, HandlerOutput, RuntimeContext } from './context.ts';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * Wraps an unsafe handler so that it runs in one transaction and, when the request carries an
 * Idempotency-Key, stores its answer in that same transaction: a retry replays it, a retry with another
 * body is refused (422), a retry while the first is running is refused (409). Keys are per caller.
 * Failed requests change nothing and store nothing, so their retries simply run again.
 */
export const withTransaction = (ctx: RuntimeContext, handler: Handler, method: string) => {
  const inFlight = new Set<string>();
  return async (input: HandlerInput, path: string): Promise<HandlerOutput> => {
    const header = input.headers['idempotency-key'];
    if (header === undefined) return ctx.store.transaction(() => handler(input));
    const key = Array.isArray(header) ? '' : header;
    if (key.length === 0 || key.length > 255) {
      throw new ApiError('idempotency_key_invalid', 'Idempotency-Key must be 1 to 255 characters.');
    }
    const fingerprint = createHash('sha256')
      .update(`${method} ${path}\n${input.body === undefined ? '' : JSON.stringify(input.body)}`)
      .digest('base64url');
    const slot = `${input.caller}\u0000${key}`;
    if (inFlight.has(slot))
      throw new ApiError('idempotency_key_in_use', 'A request with this Idempotency-Key is still running.');
    const saved = await ctx.store.idempotency.find(input.caller, key);
    if (saved) {
      if (saved.fingerprint !== fingerprint) {
        throw new ApiError('idempotency_key_reused', 'This Idempotency-Key was used with a different request.');
      }
      return { status: saved.status, body: saved.body, headers: { ...saved.headers, 'idempotent-replayed': 'true' } };
    }
    inFlight.add(slot);
    try {
      return await ctx.store.transaction(async () => {
        const output = await handler(input);
        await ctx.store.idempotency.save(
          input.caller,
          key,
          { fingerprint, status: output.status, headers: { ...output.headers }, body: output.body ?? '' },
          ctx.now(),
        );
        return output;
      });
    } finally {
      inFlight.delete(slot);
    }
  };
};
