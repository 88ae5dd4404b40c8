import type { Store } from '../../storage/index.ts';
import { ApiError } from '../errors/api-error.ts';
import { parseApiKey, verifyApiKey } from './keys.ts';
import type { Principal } from './principal.ts';

/** An apiKey scheme: keys issued by `ninefold keys create`, looked up by id on every request (revocation is immediate). */
export const keyAuthenticator =
  (scheme: string, store: Store, now: () => Date) =>
  async (text: string): Promise<Principal> => {
    const parsed = parseApiKey(text);
    const record = parsed ? await store.apiKeys.find(parsed.id) : undefined;
    if (!parsed || verifyApiKey(record, parsed.secret, now()) !== 'ok' || !record) {
      throw new ApiError('invalid_credentials', 'The API key is not valid.');
    }
    return { subject: record.subject, roles: record.roles, scheme, claims: { keyId: record.id } };
  };
