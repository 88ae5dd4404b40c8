import type { ResourcePlan, SessionPlan } from '../../plan/types.ts';
import type { Handler, HandlerInput, HandlerOutput, RuntimeContext } from '../../runtime/context.ts';
import { ApiError } from '../errors/api-error.ts';
import { FailureLimiter } from './failure-limiter.ts';
import { verifyPassword } from './passwords.ts';
import { jwtSigner } from './scheme-jwt.ts';

/**
 * A session resource on the server: sign-in, and the token every session answer carries (sign-up, sign-in, the
 * caller's own record). Tokens are signed with the session scheme's own secret, so the same scheme reads them.
 */
export const createSession = (ctx: RuntimeContext, resource: ResourcePlan, session: SessionPlan) => {
  const scheme = ctx.plan.auth.schemes.get(session.scheme);
  const sign = scheme ? jwtSigner(scheme, ctx.plan.dir) : undefined;
  const limiter = new FailureLimiter(ctx.store.counters);
  // A 401 names the scheme to use (RFC 9110); a spec that answers refused sign-ins otherwise (422) needs none.
  const challenge =
    ctx.plan.errors.catalogue.get('invalid_credentials')?.status === 401
      ? { 'www-authenticate': `${scheme?.scheme ?? 'Bearer'} realm="${ctx.plan.service.name.replace(/["\\]/g, '')}"` }
      : undefined;
  const refused = () =>
    new ApiError('invalid_credentials', 'The credentials are not valid.', undefined, undefined, challenge);

  /** The answer with a fresh token for `subject` beside the record's (or view's) fields. */
  const withToken = async (out: HandlerOutput, subject: string): Promise<HandlerOutput> => {
    if (!sign) throw new ApiError('internal', 'The service cannot sign tokens: its signing secret is not set.');
    if (out.body === undefined || out.status < 200 || out.status > 299) return out;
    const body = JSON.parse(out.body) as Record<string, unknown>;
    const token = await sign(subject, ctx.now(), session.expiresInMs);
    return { ...out, body: JSON.stringify({ ...body, [session.field]: token }) };
  };

  const byIdentifier = async (value: unknown) =>
    (
      await ctx.store.list(resource.name, {
        filters: [{ field: session.identifier, op: 'eq', value }],
        sort: [],
        limit: 1,
        count: false,
      })
    ).rows[0];

  /** Sign-up: the create, answered with a token for the user it made (found by its unique identifier). */
  const signUp =
    (create: Handler): Handler =>
    async (input) => {
      const out = await create(input);
      const user = await byIdentifier((input.body as Record<string, unknown> | undefined)?.[session.identifier]);
      if (!user) throw new ApiError('internal', 'The new user could not be read back.');
      return withToken(out, user.id);
    };

  /** The caller's own record, answered with a fresh token for the caller. */
  const own =
    (handler: Handler): Handler =>
    async (input) =>
      withToken(await handler(input), input.principal?.subject ?? '');

  /**
   * Sign-in: the identifier and password checked like Basic credentials (an unknown user costs the same work and
   * gets the same answer as a wrong password; failures count per identifier and per address, then 429), then the
   * user's own record as the user sees it, with a token.
   */
  const signIn =
    (get: Handler): Handler =>
    async (input: HandlerInput) => {
      const body = (input.body ?? {}) as Record<string, unknown>;
      const missing = [session.identifier, session.password].filter(
        (f) => typeof body[f] !== 'string' || body[f] === '',
      );
      if (missing.length)
        throw new ApiError(
          'validation_failed',
          `${missing.length} field(s) failed validation.`,
          missing.map((f) => ({ pointer: `#/${f}`, code: 'required', message: `${f} is required` })),
        );
      const name = String(body[session.identifier]);
      const now = ctx.now().getTime();
      const wait = Math.max(
        await limiter.blockedFor(`u:${name}`, now),
        await limiter.blockedFor(`ip:${input.ip}`, now),
      );
      if (wait > 0)
        throw new ApiError('too_many_requests', 'Too many failed logins; try again later.', undefined, undefined, {
          'retry-after': String(wait),
        });
      const user = await byIdentifier(name);
      const stored = user?.[session.password];
      if (
        !(await verifyPassword(String(body[session.password]), typeof stored === 'string' ? stored : undefined)) ||
        !user
      ) {
        await limiter.fail(`u:${name}`, now);
        await limiter.fail(`ip:${input.ip}`, now);
        throw refused();
      }
      const principal = { subject: user.id, roles: [], scheme: session.scheme, claims: {} };
      const out = await get({ ...input, params: { id: user.id }, body: undefined, caller: user.id, principal });
      return withToken(out, user.id);
    };

  return { signUp, own, signIn };
};
