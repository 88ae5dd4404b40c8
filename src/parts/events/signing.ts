import { createHmac, randomBytes } from 'node:crypto';

/** A Standard Webhooks secret: `whsec_` and 24 random bytes in base64. */
export const newWebhookSecret = (): string => `whsec_${randomBytes(24).toString('base64')}`;

/** The HMAC-SHA256 of "id.timestamp.body", keyed with the secret's decoded bytes (the body as given: bytes or text). */
export const signatureBytes = (secret: string, id: string, timestamp: number | string, body: string | Buffer): Buffer =>
  createHmac('sha256', Buffer.from(secret.replace(/^whsec_/, ''), 'base64'))
    .update(`${id}.${timestamp}.`)
    .update(body)
    .digest();

/** `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`: the value of one signature in `webhook-signature`. */
export const signature = (secret: string, id: string, timestamp: number, body: string): string =>
  `v1,${signatureBytes(secret, id, timestamp, body).toString('base64')}`;
