import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto';
import type { Plan } from '../../plan/types.ts';

const PARAMS: ScryptOptions = { N: 16384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
const KEY_LENGTH = 32;

const derive = (password: string, salt: Buffer, options: ScryptOptions = PARAMS) =>
  new Promise<Buffer>((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, KEY_LENGTH, options, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );

export const isPasswordHash = (value: unknown): value is string =>
  typeof value === 'string' && value.startsWith('scrypt$');

/** `scrypt$N$r$p$salt$hash` (base64url), the only form a password is ever stored in. */
export const hashPassword = async (password: string): Promise<string> => {
  const salt = randomBytes(16);
  const key = await derive(password, salt);
  return `scrypt$${PARAMS.N}$${PARAMS.r}$${PARAMS.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
};

// Checked against when the user does not exist, so both answers take the same time: a derivation with the same
// parameters, against random bytes no password derives to (made without scrypt, which costs ~50 ms at start-up).
const DUMMY = `scrypt$${PARAMS.N}$${PARAMS.r}$${PARAMS.p}$${randomBytes(16).toString('base64url')}$${randomBytes(KEY_LENGTH).toString('base64url')}`;

/** Constant-time check of a password against a stored hash (or a dummy hash when there is no user). */
export const verifyPassword = async (password: string, stored: string | undefined): Promise<boolean> => {
  const known = isPasswordHash(stored);
  const [, n, r, p, salt, hash] = (known ? stored : DUMMY).split('$');
  const expected = Buffer.from(hash ?? '', 'base64url');
  const key = await derive(password, Buffer.from(salt ?? '', 'base64url'), {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: PARAMS.maxmem,
  });
  return known && expected.length === key.length && timingSafeEqual(expected, key);
};

/** The password field of every basic scheme's user store and every session resource, per resource. */
export const passwordFieldsOf = (plan: Plan): ReadonlyMap<string, ReadonlySet<string>> => {
  const fields = new Map<string, Set<string>>();
  for (const scheme of plan.auth.schemes.values()) {
    if (scheme.type !== 'basic' || !scheme.users) continue;
    const set = fields.get(scheme.users) ?? new Set<string>();
    set.add(scheme.passwordField ?? 'password');
    fields.set(scheme.users, set);
  }
  for (const resource of plan.resources) {
    if (!resource.session) continue;
    const set = fields.get(resource.name) ?? new Set<string>();
    set.add(resource.session.password);
    fields.set(resource.name, set);
  }
  return fields;
};
