import type { Store } from '../../storage/index.ts';
import { ApiError } from '../errors/api-error.ts';
import { parseApiKey, verifyApiKey } from './keys.ts';
import type { Principal } from './principal.ts';

const MAX_REMEMBERED = 10_000;

/**
 * An apiKey scheme: keys issued by `ninefold keys create`. A key that verified is remembered (with its expiry)
 * only while the key store's generation stays the same: a revocation anywhere (this server, the CLI, another
 * process) changes it, so the very next request checks the key against the database again.
 */
export const keyAuthenticator = (scheme: string, store: Store, now: () => Date) => {
  const remembered = new Map<string, { principal: Principal; expiresAt: number }>();
  let generation = -1;
  const known = (text: string): Principal | undefined => {
    const current = store.apiKeys.generation();
    if (current !== generation) {
      remembered.clear();
      generation = current;
    }
    const hit = remembered.get(text);
    return hit && hit.expiresAt > now().getTime() ? hit.principal : undefined;
  };
  const verify = async (text: string): Promise<Principal> => {
    let hit = known(text);
    // On a store whose key changes arrive as signals, a revocation told before this request arrived is handled
    // first (its notification is already in this process's socket), then the memory is asked again.
    if (hit && store.apiKeys.settle) {
      await store.apiKeys.settle();
      hit = known(text);
    }
    if (hit) return hit;
    const parsed = parseApiKey(text);
    const record = parsed ? await store.apiKeys.find(parsed.id) : undefined;
    if (!parsed || !record || verifyApiKey(record, parsed.secret, now()) !== 'ok') {
      throw new ApiError('invalid_credentials', 'The API key is not valid.');
    }
    const claims = record.apiVersion ? { keyId: record.id, apiVersion: record.apiVersion } : { keyId: record.id };
    const principal: Principal = { subject: record.subject, roles: record.roles, scheme, claims };
    if (remembered.size < MAX_REMEMBERED) {
      remembered.set(text, {
        principal,
        expiresAt: record.expiresAt ? Date.parse(record.expiresAt) : Number.POSITIVE_INFINITY,
      });
    }
    return principal;
  };
  return { known, verify };
};
