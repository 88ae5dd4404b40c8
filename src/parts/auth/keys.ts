import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { ApiKeyRecord, Store } from '../../storage/index.ts';

/**
 * `<prefix><id>_<secret>` (prefix nfk_ by default): the id is hex (no `_`), so the first `_` after it ends it
 * whatever the base64url secret holds.
 */
const KEY_FORMAT = /^(key_[0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;
const DEFAULT_PREFIX = 'nfk_';
const MAX_KEY_LENGTH = 200;
const sha256 = (text: string) => createHash('sha256').update(text).digest();

/**
 * Issues an API key: `<prefix><id>_<secret>` (`nfk_<id>_<secret>` by default). Only the SHA-256 of the secret is stored; the key text is returned
 * once and never again.
 */
export const issueApiKey = async (
  store: Store,
  opts: {
    subject?: string;
    roles: readonly string[];
    expiresInMs?: number;
    now?: Date;
    apiVersion?: string;
    prefix?: string;
  },
): Promise<{ record: ApiKeyRecord; key: string }> => {
  const now = opts.now ?? new Date();
  const id = `key_${randomBytes(8).toString('hex')}`;
  const secret = randomBytes(32).toString('base64url');
  const record: ApiKeyRecord = {
    id,
    secretHash: sha256(secret).toString('hex'),
    subject: opts.subject ?? id,
    roles: [...opts.roles],
    createdAt: now.toISOString(),
    ...(opts.expiresInMs !== undefined ? { expiresAt: new Date(now.getTime() + opts.expiresInMs).toISOString() } : {}),
    ...(opts.apiVersion !== undefined ? { apiVersion: opts.apiVersion } : {}),
  };
  await store.transaction(() => store.apiKeys.create(record));
  return { record, key: `${opts.prefix ?? DEFAULT_PREFIX}${id}_${secret}` };
};

/** The id and secret of a key text, or undefined when it is not exactly a key this service issues (no trimming). */
export const parseApiKey = (text: string, prefix = DEFAULT_PREFIX): { id: string; secret: string } | undefined => {
  if (text.length > MAX_KEY_LENGTH || !text.startsWith(prefix)) return undefined;
  const m = KEY_FORMAT.exec(text.slice(prefix.length));
  return m ? { id: m[1] as string, secret: m[2] as string } : undefined;
};

export type ApiKeyStatus = 'live' | 'revoked' | 'expired';

/** Whether a stored key may still be used at `now` (revocation wins over expiry). */
export const apiKeyStatus = (record: ApiKeyRecord, now: Date): ApiKeyStatus => {
  if (record.revokedAt) return 'revoked';
  if (record.expiresAt && Date.parse(record.expiresAt) <= now.getTime()) return 'expired';
  return 'live';
};

const NO_HASH = Buffer.alloc(32);
const HEX_SHA256 = /^[0-9a-f]{64}$/;

/**
 * Compares in constant time: the digest is computed and compared even for an unknown key, so the answer takes the
 * same work whether the id exists or not. Revoked and expired keys are invalid.
 */
export const verifyApiKey = (record: ApiKeyRecord | undefined, secret: string, now: Date): 'ok' | 'invalid' => {
  const given = sha256(secret);
  const stored = record && HEX_SHA256.test(record.secretHash) ? Buffer.from(record.secretHash, 'hex') : NO_HASH;
  const same = timingSafeEqual(stored, given);
  if (!record || !same || stored === NO_HASH) return 'invalid';
  return apiKeyStatus(record, now) === 'live' ? 'ok' : 'invalid';
};
