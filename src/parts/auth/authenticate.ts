import type { Plan } from '../../plan/types.ts';
import type { CounterStore, Store } from '../../storage/index.ts';
import { ApiError } from '../errors/api-error.ts';
import { type AddressedRequest, requestAddress } from '../limits/trusted-proxies.ts';
import { authorization, type CredentialSource, cookieValue, headerValue, queryValue } from './credentials.ts';
import { FailureLimiter } from './failure-limiter.ts';
import type { Access } from './plan.ts';
import type { Principal } from './principal.ts';
import { basicAuthenticator, userStoreOf } from './scheme-basic.ts';
import { jwtAuthenticator } from './scheme-jwt.ts';
import { authorizationKey, keyAuthenticator } from './scheme-key.ts';
import type { CompiledScheme, SchemeSpec } from './scheme-types.ts';

export type { Access } from './plan.ts';

/**
 * The parts of a request authentication may read (a Fastify request is one). Only what a scheme needs is
 * touched: the query for query keys, the raw header lines when an Authorization header is present, the
 * address after a failed login.
 */
export interface AuthRequest extends CredentialSource {
  readonly method: string;
  /** The connection, for the client address the failed-login limiter counts (behind a trusted proxy, its client). */
  readonly socket: AddressedRequest['socket'];
  /** Header names and values as received (Node keeps only the first of two Authorization lines). */
  readonly raw?: { readonly rawHeaders: readonly string[] };
}

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

const authorizationLines = (raw: readonly string[]): number => {
  let n = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]?.length === 13 && raw[i]?.toLowerCase() === 'authorization') n++;
  return n;
};
const quoted = (s: string) => `"${s.replace(/["\\]/g, '')}"`;
/** RFC 6750 challenges (Bearer, or the spec's own word such as Token) say why a token was refused. */
const isTokenChallenge = (c: string) => !c.startsWith('Basic ') && !c.startsWith('ApiKey ');

const compileScheme = (
  warn: (message: string) => void,
  plan: Plan,
  store: Store,
  now: () => Date,
  limiter: FailureLimiter,
  name: string,
  spec: SchemeSpec,
): CompiledScheme => {
  const realm = quoted(spec.realm ?? plan.service.name);
  const clientIp = requestAddress(plan.limits.trustProxy);
  switch (spec.type) {
    case 'apiKey': {
      const where = spec.in ?? 'header';
      const keys = keyAuthenticator(name, store, now, plan.auth.keyPrefix);
      if (where === 'bearer' || where === 'basic') return authorizationKey(name, where, realm, keys);
      const param = spec.name ?? 'X-Api-Key';
      const header = param.toLowerCase();
      return {
        known: keys.known,
        name,
        place: `${where}:${where === 'header' ? param.toLowerCase() : param}`,
        challenge: `ApiKey realm=${realm}, in=${quoted(where)}, name=${quoted(param)}`,
        fromCookie: where === 'cookie',
        read:
          where === 'header'
            ? (s) => headerValue(s, header)
            : where === 'query'
              ? (s) => queryValue(s, param)
              : (s) => cookieValue(s, param),
        verify: (credential) => keys.verify(credential),
      };
    }
    case 'basic': {
      const verify = basicAuthenticator(name, userStoreOf(spec, plan.resourcesByName), store, limiter);
      return {
        name,
        place: 'authorization:basic',
        challenge: `Basic realm=${realm}, charset="UTF-8"`,
        fromCookie: false,
        read: (s) => authorization(s, 'basic'),
        verify: (credential, request) => verify(credential, clientIp(request)),
      };
    }
    default: {
      // bearer (JWT) and oidc (a bearer JWT checked against the provider's keys), under the spec's word (Token)
      const verify = jwtAuthenticator(name, spec, plan.dir, warn);
      const word = spec.scheme ?? 'Bearer';
      return {
        name,
        place: `authorization:${word.toLowerCase()}`,
        challenge: `${word} realm=${realm}`,
        fromCookie: false,
        read: (s) => authorization(s, word.toLowerCase()),
        verify: (credential) => verify(credential),
      };
    }
  }
};

/** Compiles the schemes once; `authenticate` then answers who is calling a route, or throws the catalogued 4xx. */
export const createAuthenticator = (
  plan: Plan,
  store: Store,
  now: () => Date,
  warn: (message: string) => void,
  counters: CounterStore = store.counters,
) => {
  const limiter = new FailureLimiter(counters);
  const schemes = new Map<string, CompiledScheme>();
  for (const [name, spec] of plan.auth.schemes)
    schemes.set(name, compileScheme(warn, plan, store, now, limiter, name, spec));

  const allNames = [...schemes.keys()];
  const challengesOf = (names: readonly string[]) =>
    names.map((n) => schemes.get(n)?.challenge).filter((c): c is string => c !== undefined);

  const withChallenge = (error: ApiError, scheme: CompiledScheme, names: readonly string[]): ApiError => {
    const challenges = challengesOf(names).map((c) =>
      c === scheme.challenge && isTokenChallenge(c) && error.code !== 'too_many_requests'
        ? `${c}, error="invalid_token"`
        : c,
    );
    return new ApiError(error.code, error.detail, error.errors, error.extensions, {
      ...error.headers,
      'www-authenticate': challenges,
    });
  };

  const csrfCheck = (request: AuthRequest) => {
    if (!UNSAFE.has(request.method)) return;
    const site = headerValue(request, 'sec-fetch-site');
    const origin = headerValue(request, 'origin');
    const host = headerValue(request, 'host');
    let crossOrigin = false;
    if (origin !== undefined) {
      try {
        crossOrigin = origin === 'null' || new URL(origin).host !== host;
      } catch {
        crossOrigin = true;
      }
    }
    if (site === 'cross-site' || site === 'same-site' || crossOrigin) {
      throw new ApiError('csrf', 'A key in a cookie cannot change data from another site.');
    }
  };

  const verifyOne = async (
    scheme: CompiledScheme,
    credential: string,
    request: AuthRequest,
    names: readonly string[],
  ) => {
    try {
      const principal = await scheme.verify(credential, request);
      if (scheme.fromCookie) csrfCheck(request);
      return principal;
    } catch (error) {
      if (error instanceof ApiError && error.code !== 'csrf') throw withChallenge(error, scheme, names);
      throw error;
    }
  };

  /** The first scheme of a place that accepts the credential; else the most telling refusal. */
  const verifyAny = async (
    group: readonly CompiledScheme[],
    credential: string,
    request: AuthRequest,
    names: readonly string[],
  ): Promise<Principal> => {
    if (group.length === 1) return verifyOne(group[0] as CompiledScheme, credential, request, names);
    let refusal: unknown;
    for (const scheme of group) {
      try {
        return await verifyOne(scheme, credential, request, names);
      } catch (error) {
        // A token that one scheme finds expired or meant for another audience says more than a bad signature.
        if (refusal === undefined || (error instanceof ApiError && error.code !== 'invalid_token')) refusal = error;
      }
    }
    throw refusal;
  };

  /**
   * Who is calling a route with this access, or the catalogued 4xx. Synchronous when the answer is already
   * known (no credential on a public route, an API key verified before and unchanged since), else a promise.
   */
  const authenticate = (
    request: AuthRequest,
    access: Access,
  ): Principal | undefined | Promise<Principal | undefined> => {
    // A public route still identifies a caller who sends a credential (and refuses a bad one).
    const names = access.kind === 'public' ? allNames : access.schemes;
    if (request.headers.authorization !== undefined && request.raw && authorizationLines(request.raw.rawHeaders) > 1) {
      throw new ApiError('ambiguous_credentials', 'The request carries more than one Authorization header.');
    }
    // The common case first, with nothing allocated: the route takes one scheme and its key is known.
    if (names.length === 1) {
      const scheme = schemes.get(names[0] as string);
      const credential = scheme?.read(request);
      const known = credential === undefined ? undefined : scheme?.known?.(credential);
      if (known && scheme) {
        if (scheme.fromCookie) csrfCheck(request);
        return known;
      }
    }
    // One credential per place: schemes that read the same place (two bearer schemes) try it in turn.
    const present: Array<[CompiledScheme[], string]> = [];
    for (const name of names) {
      const scheme = schemes.get(name);
      const credential = scheme?.read(request);
      if (!scheme || credential === undefined) continue;
      const same = present.find(([group]) => group[0]?.place === scheme.place);
      if (same) same[0].push(scheme);
      else present.push([[scheme], credential]);
    }
    if (present.length === 0) {
      if (access.kind === 'public') return undefined;
      throw new ApiError('unauthenticated', 'This endpoint needs credentials.', undefined, undefined, {
        'www-authenticate': challengesOf(names),
      });
    }
    if (access.kind === 'all') {
      const missing = names.filter((n) => !present.some(([group]) => group.some((s) => s.name === n)));
      if (missing.length) {
        throw new ApiError('unauthenticated', `This endpoint needs ${names.join(' and ')}.`, undefined, undefined, {
          'www-authenticate': challengesOf(missing),
        });
      }
    }
    const [first, ...others] = present;
    if (!first) return undefined;
    if (others.length === 0) {
      const [group, credential] = first;
      const only = group.length === 1 ? group[0] : undefined;
      const known = only?.known?.(credential);
      if (known && only) {
        if (only.fromCookie) csrfCheck(request);
        return known;
      }
      return verifyAny(group, credential, request, names);
    }
    return verifyAll(present, request, access, names);
  };

  const verifyAll = async (
    present: Array<[CompiledScheme[], string]>,
    request: AuthRequest,
    access: Access,
    names: readonly string[],
  ): Promise<Principal> => {
    // Several credentials: each must hold and name the same caller; otherwise nobody is picked.
    const principals: Principal[] = [];
    for (const [group, credential] of present) {
      try {
        principals.push(await verifyAny(group, credential, request, names));
      } catch (error) {
        if (error instanceof ApiError && error.code === 'too_many_requests') throw error;
        if (access.kind === 'all') throw error;
        throw new ApiError('ambiguous_credentials', 'The request carries several credentials that do not agree.');
      }
    }
    if (new Set(principals.map((p) => p.subject)).size > 1) {
      throw new ApiError('ambiguous_credentials', 'The request carries credentials of different callers.');
    }
    const roles = [...new Set(principals.flatMap((p) => p.roles))];
    const base = principals[0] as Principal;
    return access.kind === 'all' ? { ...base, roles } : base;
  };

  return { authenticate, enabled: schemes.size > 0, schemes: [...schemes.keys()] };
};

export type Authenticator = ReturnType<typeof createAuthenticator>;
