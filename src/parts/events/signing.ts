import { createHmac, createSecretKey, type KeyObject, randomBytes } from 'node:crypto';

/** A Standard Webhooks secret: `whsec_` and 24 random bytes in base64. */
export const newWebhookSecret = (): string => `whsec_${randomBytes(24).toString('base64')}`;

/** The HMAC key of a `whsec_…` secret: its base64 part, decoded. */
const keyBytes = (secret: string): Buffer => Buffer.from(secret.replace(/^whsec_/, ''), 'base64');

/** The HMAC-SHA256 of "id.timestamp.body", keyed with the secret's decoded bytes (the body as given: bytes or text). */
export const signatureBytes = (secret: string, id: string, timestamp: number | string, body: string | Buffer): Buffer =>
  createHmac('sha256', keyBytes(secret)).update(`${id}.${timestamp}.`).update(body).digest();

/** `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`: the value of one signature in `webhook-signature`. */
export const signature = (secret: string, id: string, timestamp: number, body: string): string =>
  `v1,${signatureBytes(secret, id, timestamp, body).toString('base64')}`;

/** Secrets whose decoded keys a signer keeps: a sender has few endpoints (and callbacks share one secret each). */
const KEYS_KEPT = 256;

/**
 * `signature`, for a sender that signs many deliveries with few secrets: each secret is decoded once, into a key
 * object, rather than on every attempt.
 */
export const createSigner = () => {
  const keys = new Map<string, KeyObject>();
  const keyOf = (secret: string): KeyObject => {
    let key = keys.get(secret);
    if (!key) {
      if (keys.size >= KEYS_KEPT) keys.clear();
      key = createSecretKey(keyBytes(secret));
      keys.set(secret, key);
    }
    return key;
  };
  return (secret: string, id: string, timestamp: number, body: string): string =>
    `v1,${createHmac('sha256', keyOf(secret)).update(`${id}.${timestamp}.`).update(body).digest('base64')}`;
};
