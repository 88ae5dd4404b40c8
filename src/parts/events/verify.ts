import { timingSafeEqual } from 'node:crypto';
import { signatureBytes } from './signing.ts';

export interface VerifyOptions {
  /** The receiver's clock (tests inject one). */
  readonly now?: () => Date;
  /** How far a timestamp may be from now, either way, in seconds (default 300). */
  readonly toleranceSec?: number;
  /**
   * Replay protection: told each verified delivery as `<webhook-id>.<webhook-timestamp>`, answers whether it was
   * seen before; `createReplayGuard()` is an in-memory one. The timestamp is part of the key on purpose: a
   * sender's retry keeps the id but signs a fresh timestamp, and must get through (deduplicating processed
   * events by `webhook-id` is the receiver's own job, after it has handled one); a captured delivery sent again
   * has both the same, and is refused.
   */
  readonly seen?: (key: string) => boolean;
}

export type VerifyFailure = 'missing_headers' | 'stale_timestamp' | 'bad_signature' | 'replayed' | 'invalid_body';

/** Thrown by `verifyWebhook`; `reason` says which check failed. */
export class WebhookVerificationError extends Error {
  constructor(readonly reason: VerifyFailure) {
    super(`webhook verification failed: ${reason}`);
    this.name = 'WebhookVerificationError';
  }
}

type Headers = Readonly<Record<string, string | string[] | undefined>>;

/** `name` (lower case) in any case: Node lower-cases header names, a hand-built object may not. */
const header = (headers: Headers, name: string): string | undefined => {
  const key = name in headers ? name : Object.keys(headers).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : headers[key];
  return Array.isArray(value) ? value[0] : value;
};

/**
 * Verifies a Standard Webhooks delivery and returns its parsed body: the signature (`v1,<base64 HMAC-SHA256 of
 * id.timestamp.body>`, any of the space-separated ones, compared in constant time) over the exact bytes
 * received, a timestamp within five minutes of now either way, and, given `seen`, an id not seen before.
 * `secret` is the endpoint's `whsec_…` value. Throws WebhookVerificationError.
 */
export const verifyWebhook = (secret: string, headers: Headers, body: string | Buffer, options: VerifyOptions = {}) => {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures || !/^\d{1,12}$/.test(timestamp))
    throw new WebhookVerificationError('missing_headers');
  const nowSec = Math.floor((options.now?.() ?? new Date()).getTime() / 1000);
  if (Math.abs(nowSec - Number(timestamp)) > (options.toleranceSec ?? 300))
    throw new WebhookVerificationError('stale_timestamp');
  // Signed over the bytes as received: decoding them first could change what is checked.
  const expected = signatureBytes(secret, id, timestamp, body);
  const matches = signatures.split(' ').some((candidate) => {
    const [version, value] = candidate.split(',', 2);
    if (version !== 'v1' || !value) return false;
    const given = Buffer.from(value, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) throw new WebhookVerificationError('bad_signature');
  if (options.seen?.(`${id}.${timestamp}`)) throw new WebhookVerificationError('replayed');
  try {
    return JSON.parse(typeof body === 'string' ? body : body.toString('utf8')) as unknown;
  } catch {
    throw new WebhookVerificationError('invalid_body'); // signed, but not JSON: not something Ninefold sends
  }
};

/**
 * Remembers verified deliveries for `keepSec` (default 600: twice the timestamp tolerance, so a delivery
 * replayed within its valid window is always caught; later its timestamp is refused anyway). In memory: one
 * receiver process.
 */
export const createReplayGuard = (keepSec = 600, now: () => Date = () => new Date()) => {
  const seenAt = new Map<string, number>();
  return (id: string): boolean => {
    const t = now().getTime();
    for (const [key, at] of seenAt) {
      if (t - at <= keepSec * 1000) break; // oldest first: the rest are younger
      seenAt.delete(key);
    }
    if (seenAt.has(id)) return true;
    seenAt.set(id, t);
    return false;
  };
};
