import type { RuntimeContext } from '../../runtime/context.ts';
import type { RouteSpec } from '../../runtime/route-spec.ts';
import { parseDuration } from '../../spec/units.ts';
import { ApiError, type FieldError } from '../errors/api-error.ts';
import { issueApiKey } from './keys.ts';

const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8' };

const shown = (k: {
  id: string;
  subject: string;
  roles: readonly string[];
  createdAt: string;
  expiresAt?: string;
  revokedAt?: string;
  apiVersion?: string;
}) => ({
  id: k.id,
  subject: k.subject,
  roles: k.roles,
  createdAt: k.createdAt,
  expiresAt: k.expiresAt ?? null,
  revokedAt: k.revokedAt ?? null,
  ...(k.apiVersion ? { apiVersion: k.apiVersion } : {}),
});

/** The fields of POST /_ninefold/keys, each problem with its pointer. */
const keyProblems = (
  body: Record<string, unknown>,
  declaredRoles: readonly string[],
  versions: readonly string[] | undefined,
) => {
  const problems: FieldError[] = [];
  const roles = body.roles;
  // A spec that declares no roles issues keys without any (`roles` absent or empty).
  const rolesOptional = declaredRoles.length === 0;
  if (
    !(rolesOptional && (roles === undefined || (Array.isArray(roles) && roles.length === 0))) &&
    (!Array.isArray(roles) ||
      roles.length === 0 ||
      roles.some((r) => typeof r !== 'string' || !declaredRoles.includes(r)))
  ) {
    problems.push({
      pointer: '#/roles',
      code: 'invalid_enum',
      message: rolesOptional
        ? 'roles must be empty: the spec declares no roles'
        : `roles must be some of ${declaredRoles.join(', ')}`,
    });
  }
  if (
    body.subject !== undefined &&
    (typeof body.subject !== 'string' || body.subject.length === 0 || body.subject.length > 200)
  ) {
    problems.push({ pointer: '#/subject', code: 'invalid_type', message: 'subject must be a non-empty string' });
  }
  if (body.expiresIn !== undefined && parseDuration(body.expiresIn) === undefined) {
    problems.push({
      pointer: '#/expiresIn',
      code: 'invalid_format',
      message: 'expiresIn must be a duration like 90d or P90D',
    });
  }
  if (versions && body.apiVersion !== undefined && !versions.includes(body.apiVersion as string))
    problems.push({
      pointer: '#/apiVersion',
      code: 'invalid_enum',
      message: `apiVersion must be one of ${versions.join(', ')}`,
    });
  const fields = ['roles', 'subject', 'expiresIn', ...(versions ? ['apiVersion'] : [])];
  for (const k of Object.keys(body).filter((k) => !fields.includes(k)))
    problems.push({ pointer: `#/${k}`, code: 'unknown_field', message: `${k} is not a field of a key` });
  return problems;
};

/**
 * The admin API for API keys, for callers with the `admin` role through any scheme (a built-in `admin` route):
 * GET /_ninefold/keys, POST /_ninefold/keys {roles, subject?, expiresIn?} (the key is in this answer only),
 * DELETE /_ninefold/keys/{id} (effective on the next request).
 */
export const keyAdminRoutes = (ctx: RuntimeContext): RouteSpec[] => {
  const declaredRoles = [...ctx.plan.auth.roles.keys()];
  const versions = ctx.plan.versioning?.ids;
  const kind = { action: 'keys', builtIn: 'admin' } as const;
  return [
    {
      method: 'GET',
      path: '/_ninefold/keys',
      operation: 'keys.list',
      kind,
      body: 'none',
      handler: async () => ({
        status: 200,
        headers: JSON_TYPE,
        body: JSON.stringify({ data: (await ctx.store.apiKeys.list()).map(shown) }),
      }),
    },
    {
      method: 'POST',
      path: '/_ninefold/keys',
      operation: 'keys.create',
      kind,
      body: 'optional',
      validate: (input) => {
        const problems = keyProblems((input.body ?? {}) as Record<string, unknown>, declaredRoles, versions);
        if (problems.length)
          throw new ApiError('validation_failed', `${problems.length} field(s) failed validation.`, problems);
      },
      handler: async (input) => {
        const body = (input.body ?? {}) as Record<string, unknown>;
        const expiresInMs = body.expiresIn === undefined ? undefined : parseDuration(body.expiresIn);
        const { record, key } = await issueApiKey(ctx.store, {
          roles: (body.roles as string[] | undefined) ?? [],
          prefix: ctx.plan.auth.keyPrefix,
          ...(typeof body.subject === 'string' ? { subject: body.subject } : {}),
          ...(expiresInMs !== undefined ? { expiresInMs } : {}),
          ...(typeof body.apiVersion === 'string' ? { apiVersion: body.apiVersion } : {}),
          now: ctx.now(),
        });
        return { status: 201, headers: JSON_TYPE, body: JSON.stringify({ ...shown(record), key }) };
      },
    },
    {
      method: 'DELETE',
      path: '/_ninefold/keys/{id}',
      operation: 'keys.revoke',
      kind,
      body: 'none',
      handler: async (input) => {
        const id = input.params.id ?? '';
        if (!(await ctx.store.apiKeys.revoke(id, ctx.now()))) throw new ApiError('not_found', `No live key ${id}.`);
        return { status: 204 };
      },
    },
  ];
};
