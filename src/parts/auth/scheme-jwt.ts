import { createPublicKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createLocalJWKSet, createRemoteJWKSet, errors, type JWTVerifyGetKey, jwtVerify, SignJWT } from 'jose';
import { ApiError } from '../errors/api-error.ts';
import type { Principal } from './principal.ts';
import type { SchemeSpec } from './scheme-types.ts';

const MAX_TOKEN_BYTES = 8 * 1024;
const LEEWAY_SECONDS = 60;

/** `env:VAR`, `file:path` (relative to the spec) or the text itself. */
const material = (value: string, dir: string): string => {
  if (value.startsWith('env:')) {
    const v = process.env[value.slice(4)];
    if (!v) throw new Error(`environment variable ${value.slice(4)} is not set`);
    return v;
  }
  if (value.startsWith('file:')) return readFileSync(resolve(dir, value.slice(5)), 'utf8');
  return value;
};

type VerifyKey = Uint8Array | KeyObject | JWTVerifyGetKey;

const verificationKey = (name: string, spec: SchemeSpec, dir: string): { key: VerifyKey; algorithms: string[] } => {
  if (spec.secret) {
    return {
      key: new TextEncoder().encode(material(spec.secret, dir)),
      algorithms: [...(spec.algorithms ?? ['HS256'])],
    };
  }
  if (spec.publicKey) {
    return { key: createPublicKey(material(spec.publicKey, dir)), algorithms: [...(spec.algorithms ?? ['RS256'])] };
  }
  if (spec.jwks) {
    const key = /^https:\/\//.test(spec.jwks)
      ? createRemoteJWKSet(new URL(spec.jwks))
      : createLocalJWKSet(JSON.parse(material(spec.jwks.startsWith('file:') ? spec.jwks : `file:${spec.jwks}`, dir)));
    return { key, algorithms: [...(spec.algorithms ?? ['RS256'])] };
  }
  throw new Error(`scheme ${name}: a bearer JWT scheme needs secret, publicKey or jwks`);
};

const invalid = (detail: string) => new ApiError('invalid_token', detail);

/**
 * A bearer JWT scheme (jose): algorithms pinned by the spec (so `none` and HS/RS switching fail), the key from
 * the spec only (a token's jku/x5u/kid never fetches anything), exp required, iss/aud/nbf checked, 60 s leeway.
 */
export const jwtAuthenticator = (name: string, spec: SchemeSpec, dir: string, warn: (message: string) => void) => {
  let compiled: ReturnType<typeof verificationKey>;
  try {
    compiled = verificationKey(name, spec, dir);
  } catch (error) {
    // A missing secret or key must not stop the service: this scheme then refuses every token.
    warn(`auth scheme ${name}: ${error instanceof Error ? error.message : String(error)}; its tokens are refused`);
    return async (): Promise<Principal> => {
      throw invalid('Tokens of this scheme cannot be verified: the service has no key for it.');
    };
  }
  const { key, algorithms } = compiled;
  const subjectClaim = spec.subjectClaim ?? 'sub';
  const rolesClaim = spec.rolesClaim ?? 'roles';
  const options = {
    algorithms,
    clockTolerance: LEEWAY_SECONDS,
    requiredClaims: ['exp'],
    ...(spec.issuer ? { issuer: spec.issuer } : {}),
    ...(spec.audience ? { audience: spec.audience } : {}),
  };
  return async (token: string): Promise<Principal> => {
    if (token.length > MAX_TOKEN_BYTES || !/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token)) {
      throw invalid('The bearer token is not a well-formed JWT.');
    }
    let claims: Record<string, unknown>;
    try {
      const verified =
        typeof key === 'function' ? await jwtVerify(token, key, options) : await jwtVerify(token, key, options);
      claims = verified.payload as Record<string, unknown>;
    } catch (error) {
      if (error instanceof errors.JWTExpired) throw new ApiError('token_expired', 'The token has expired.');
      if (error instanceof errors.JWTClaimValidationFailed && (error.claim === 'aud' || error.claim === 'iss')) {
        throw new ApiError('invalid_audience', 'The token was issued for another audience or by another issuer.');
      }
      throw invalid('The bearer token is not valid.');
    }
    const subject = claims[subjectClaim];
    if (typeof subject !== 'string' || subject === '') throw invalid(`The token has no ${subjectClaim} claim.`);
    // Roles: an array of strings, or one space-separated string (as OAuth scopes are); anything else is refused.
    const raw = claims[rolesClaim];
    let roles: string[];
    if (raw === undefined) roles = [];
    else if (typeof raw === 'string') roles = raw.split(' ').filter(Boolean);
    else if (Array.isArray(raw) && raw.every((r) => typeof r === 'string')) roles = raw;
    else throw invalid(`The token's ${rolesClaim} claim is not a list of role names.`);
    return { subject, roles, scheme: name, claims };
  };
};

/**
 * Signs tokens this scheme then accepts: HS* with the scheme's own secret, its first algorithm, its issuer and
 * audience, `sub` the user's id. Undefined when the scheme cannot sign (no secret at start-up).
 */
export const jwtSigner = (spec: SchemeSpec, dir: string) => {
  if (!spec.secret) return undefined;
  let key: Uint8Array;
  try {
    key = new TextEncoder().encode(material(spec.secret, dir));
  } catch {
    return undefined;
  }
  const alg = spec.algorithms?.[0] ?? 'HS256';
  return (subject: string, now: Date, expiresInMs: number): Promise<string> => {
    const iat = Math.floor(now.getTime() / 1000);
    let jwt = new SignJWT({})
      .setProtectedHeader({ alg, typ: 'JWT' })
      .setSubject(subject)
      .setIssuedAt(iat)
      .setExpirationTime(iat + Math.ceil(expiresInMs / 1000));
    if (spec.issuer) jwt = jwt.setIssuer(spec.issuer);
    if (spec.audience) jwt = jwt.setAudience(spec.audience);
    return jwt.sign(key);
  };
};
