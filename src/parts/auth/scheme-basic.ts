import type { ResourcePlan } from '../../plan/types.ts';
import type { Store } from '../../storage/index.ts';
import { ApiError } from '../errors/api-error.ts';
import type { FailureLimiter } from './failure-limiter.ts';
import { verifyPassword } from './passwords.ts';
import type { Principal } from './principal.ts';
import type { SchemeSpec } from './scheme-types.ts';

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const bad = () => new ApiError('invalid_credentials', 'The user name or password is not valid.');

/** The user store of a basic scheme: one resource, a user-name field, a hashed password field, a roles field. */
export interface UserStore {
  readonly resource: ResourcePlan;
  readonly usernameField: string;
  readonly passwordField: string;
  readonly rolesField?: string;
}

export const userStoreOf = (spec: SchemeSpec, resources: ReadonlyMap<string, ResourcePlan>): UserStore => {
  const resource = spec.users ? resources.get(spec.users) : undefined;
  if (!resource) throw new Error(`basic scheme: no users resource "${spec.users ?? ''}"`);
  return {
    resource,
    usernameField: spec.usernameField ?? 'username',
    passwordField: spec.passwordField ?? 'password',
    ...(spec.rolesField ? { rolesField: spec.rolesField } : {}),
  };
};

/**
 * HTTP Basic against the users resource. Unknown users and wrong passwords get the same answer after the same
 * work (a dummy hash is checked); failures count per user name and per client address, and past the limit the
 * answer is 429 whatever the password.
 */
export const basicAuthenticator =
  (name: string, users: UserStore, store: Store, limiter: FailureLimiter) =>
  async (encoded: string, client: string): Promise<Principal> => {
    if (encoded.length > 4096 || !BASE64.test(encoded)) throw bad();
    const decoded = Buffer.from(encoded, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon <= 0 || colon === decoded.length - 1) throw bad();
    const username = decoded.slice(0, colon);
    const password = decoded.slice(colon + 1);
    const now = Date.now();
    const wait = Math.max(
      await limiter.blockedFor(`u:${username}`, now),
      await limiter.blockedFor(`ip:${client}`, now),
    );
    if (wait > 0) {
      throw new ApiError('too_many_requests', 'Too many failed logins; try again later.', undefined, undefined, {
        'retry-after': String(wait),
      });
    }
    const found = await store.list(users.resource.name, {
      filters: [{ field: users.usernameField, op: 'eq', value: username }],
      sort: [],
      limit: 1,
      count: false,
    });
    const user = found.rows[0];
    const stored = user?.[users.passwordField];
    if (!(await verifyPassword(password, typeof stored === 'string' ? stored : undefined)) || !user) {
      await limiter.fail(`u:${username}`, now);
      await limiter.fail(`ip:${client}`, now);
      throw bad();
    }
    const raw = users.rolesField ? user[users.rolesField] : undefined;
    const roles = Array.isArray(raw)
      ? raw.filter((r): r is string => typeof r === 'string')
      : typeof raw === 'string'
        ? [raw]
        : [];
    return { subject: user.id, roles, scheme: name, claims: { username } };
  };
