import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RuntimeContext } from '../../runtime/context.ts';
import { parseDuration } from '../../spec/units.ts';
import { ApiError } from '../errors/api-error.ts';
import type { Authenticator, AuthRequest } from './authenticate.ts';
import { issueApiKey } from './keys.ts';

/** The role that may manage keys over HTTP. */
export const KEY_ADMIN_ROLE = 'admin';
const PATH = '/_ninefold/keys';

const shown = (k: {
  id: string;
  subject: string;
  roles: readonly string[];
  createdAt: string;
  expiresAt?: string;
  revokedAt?: string;
}) => ({
  id: k.id,
  subject: k.subject,
  roles: k.roles,
  createdAt: k.createdAt,
  expiresAt: k.expiresAt ?? null,
  revokedAt: k.revokedAt ?? null,
});

/**
 * The admin API for API keys, for callers with the `admin` role through any scheme:
 * GET /_ninefold/keys, POST /_ninefold/keys {roles, subject?, expiresIn?} (the key is in this answer only),
 * DELETE /_ninefold/keys/{id} (effective on the next request).
 */
export const registerKeyAdmin = (app: FastifyInstance, ctx: RuntimeContext, auth: Authenticator) => {
  const base = `${ctx.plan.service.basePath}${PATH}`;
  const declaredRoles = Object.keys(ctx.plan.spec.auth?.roles ?? {});
  const onRequest = async (request: FastifyRequest) => {
    const principal = await auth.authenticate(request as FastifyRequest & AuthRequest, {
      kind: 'any',
      schemes: auth.schemes,
    });
    if (!principal?.roles.includes(KEY_ADMIN_ROLE)) {
      throw new ApiError('forbidden', `Managing keys needs the ${KEY_ADMIN_ROLE} role.`);
    }
  };
  app.get(base, { onRequest }, async (_request, reply) =>
    reply.type('application/json; charset=utf-8').send({ data: (await ctx.store.apiKeys.list()).map(shown) }),
  );
  app.post(base, { onRequest }, async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const roles = body.roles;
    const problems = [];
    if (
      !Array.isArray(roles) ||
      roles.length === 0 ||
      roles.some((r) => typeof r !== 'string' || !declaredRoles.includes(r))
    ) {
      problems.push({
        pointer: '#/roles',
        code: 'invalid_enum',
        message: `roles must be some of ${declaredRoles.join(', ')}`,
      });
    }
    if (
      body.subject !== undefined &&
      (typeof body.subject !== 'string' || body.subject.length === 0 || body.subject.length > 200)
    ) {
      problems.push({ pointer: '#/subject', code: 'invalid_type', message: 'subject must be a non-empty string' });
    }
    const expiresInMs = body.expiresIn === undefined ? undefined : parseDuration(body.expiresIn);
    if (body.expiresIn !== undefined && expiresInMs === undefined) {
      problems.push({
        pointer: '#/expiresIn',
        code: 'invalid_format',
        message: 'expiresIn must be a duration like 90d or P90D',
      });
    }
    const unknown = Object.keys(body).filter((k) => !['roles', 'subject', 'expiresIn'].includes(k));
    for (const k of unknown)
      problems.push({ pointer: `#/${k}`, code: 'unknown_field', message: `${k} is not a field of a key` });
    if (problems.length)
      throw new ApiError('validation_failed', `${problems.length} field(s) failed validation.`, problems);
    const { record, key } = await issueApiKey(ctx.store, {
      roles: roles as string[],
      ...(typeof body.subject === 'string' ? { subject: body.subject } : {}),
      ...(expiresInMs !== undefined ? { expiresInMs } : {}),
      now: ctx.now(),
    });
    return reply
      .code(201)
      .type('application/json; charset=utf-8')
      .send({ ...shown(record), key });
  });
  app.delete(`${base}/:id`, { onRequest }, async (request, reply) => {
    const { id } = request.params as { id: string };
    if (!(await ctx.store.apiKeys.revoke(id, ctx.now()))) throw new ApiError('not_found', `No live key ${id}.`);
    return reply.code(204).send();
  });
};
