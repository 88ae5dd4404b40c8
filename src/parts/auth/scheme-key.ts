import type { Store } from '../../storage/index.ts';
import { ApiError } from '../errors/api-error.ts';
import { authorization, basicUserOnly } from './credentials.ts';
import { parseApiKey, verifyApiKey } from './keys.ts';
import type { Principal } from './principal.ts';
import type { CompiledScheme } from './scheme-types.ts';

const MAX_REMEMBERED = 10_000;

/**
 * An apiKey scheme: keys issued by `ninefold keys create` (with the scheme's prefix). A key that verified is remembered (with its expiry)
 * only while the key store's generation stays the same: a revocation anywhere (this server, the CLI, another
 * process) changes it, so the very next request checks the key against the database again.
 */
export const keyAuthenticator = (scheme: string, store: Store, now: () => Date, prefix?: string) => {
  const remembered = new Map<string, { principal: Principal; expiresAt: number }>();
  let generation = -1;
  const known = (text: string): Principal | undefined => {
    const current = store.apiKeys.generation();
    if (current !== generation) {
      remembered.clear();
      generation = current;
    }
    const hit = remembered.get(text);
    // A key without an expiry needs no clock (the clock makes a Date).
    return hit && (hit.expiresAt === Number.POSITIVE_INFINITY || hit.expiresAt > now().getTime())
      ? hit.principal
      : undefined;
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
    const parsed = parseApiKey(text, prefix);
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
  // Answered without I/O only where the store's generation is current when read (SQLite: its data_version). Where
  // key changes arrive as signals, a remembered key is trusted only after `settle` (in verify): a revocation through
  // another instance whose notification is late would otherwise pass here.
  return { known: store.apiKeys.settle ? notYet : known, verify };
};

const notYet = (): Principal | undefined => undefined;

/** An apiKey scheme read from Authorization: as the Bearer token, or as the Basic user name with an empty password. */
export const authorizationKey = (
  name: string,
  where: 'bearer' | 'basic',
  realm: string,
  keys: ReturnType<typeof keyAuthenticator>,
): CompiledScheme => {
  const keyOf = where === 'bearer' ? (credential: string) => credential : basicUserOnly;
  return {
    known: (credential) => {
      const key = keyOf(credential);
      return key === undefined ? undefined : keys.known(key);
    },
    name,
    place: `authorization:${where}`,
    challenge: where === 'bearer' ? `Bearer realm=${realm}` : `Basic realm=${realm}, charset="UTF-8"`,
    fromCookie: false,
    read: (s) => authorization(s, where),
    verify: (credential) => {
      const key = keyOf(credential);
      if (key === undefined) throw new ApiError('invalid_credentials', 'The API key is not valid.');
      return keys.verify(key);
    },
  };
};
