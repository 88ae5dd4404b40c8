import type { Plan } from '../../plan/types.ts';
import { errorResponses } from '../errors/openapi.ts';
import type { OpenApiObject } from '../openapi-model.ts';
import { type RouteKind, routeAccess } from './route-access.ts';

/** components.securitySchemes: each scheme with its credential's name and place. */
export const securitySchemes = (plan: Plan): Record<string, OpenApiObject> => {
  const out: Record<string, OpenApiObject> = {};
  for (const [name, s] of plan.auth.schemes) {
    const description = s.description ? { description: s.description } : {};
    if (s.type === 'apiKey')
      out[name] = { type: 'apiKey', in: s.in ?? 'header', name: s.name ?? 'X-Api-Key', ...description };
    else if (s.type === 'basic') out[name] = { type: 'http', scheme: 'basic', ...description };
    else out[name] = { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', ...description };
  }
  return out;
};

/** Every operation the runtime serves, with what it is for access control. */
const routeKinds = (plan: Plan): Array<{ method: string; path: string; kind: RouteKind }> => {
  const base = plan.service.basePath;
  const out: Array<{ method: string; path: string; kind: RouteKind }> = [];
  const methods = {
    list: 'get',
    create: 'post',
    get: 'get',
    update: 'patch',
    replace: 'put',
    delete: 'delete',
  } as const;
  for (const r of plan.resources) {
    for (const op of r.operations) {
      const path = op === 'list' || op === 'create' ? r.collectionPath : r.itemPath;
      out.push({ method: methods[op], path: `${base}${path}`, kind: { resource: r.name, action: op } });
    }
    for (const t of r.states?.transitions ?? [])
      out.push({
        method: 'post',
        path: `${base}${r.itemPath}/${t.path}`,
        kind: { resource: r.name, action: t.name, transition: true },
      });
    if (r.states)
      out.push({ method: 'get', path: `${base}${r.itemPath}/history`, kind: { resource: r.name, action: 'history' } });
  }
  for (const c of plan.custom)
    out.push({ method: c.method.toLowerCase(), path: `${base}${c.path}`, kind: { action: c.name, custom: true } });
  return out;
};

/** The codes an existing responses object already documents (a $ref per code, or examples keyed by code). */
const documentedCodes = (responses: OpenApiObject): string[] =>
  Object.values(responses).flatMap((r) => {
    const ref = (r as { $ref?: string }).$ref;
    if (ref?.startsWith('#/components/responses/')) return [ref.slice('#/components/responses/'.length)];
    const content = (r as { content?: Record<string, { examples?: Record<string, unknown> }> }).content;
    return Object.values(content ?? {}).flatMap((m) => Object.keys(m.examples ?? {}));
  });

/** Sets `security` on every operation and adds the answers authentication and authorisation can give. */
export const applySecurity = (plan: Plan, paths: Record<string, OpenApiObject>) => {
  const schemes = [...plan.auth.schemes.values()];
  if (schemes.length === 0) return;
  const hasBasic = schemes.some((s) => s.type === 'basic');
  const hasBearer = schemes.some((s) => s.type === 'bearer' || s.type === 'oidc');
  const { rules } = plan.auth;
  for (const { method, path, kind } of routeKinds(plan)) {
    const op = (paths[path] as Record<string, OpenApiObject> | undefined)?.[method] as OpenApiObject | undefined;
    if (!op) continue;
    const { access, roles } = routeAccess(plan, kind);
    op.security =
      access.kind === 'public'
        ? [{}]
        : access.kind === 'any'
          ? access.schemes.map((s) => ({ [s]: [] }))
          : [Object.fromEntries(access.schemes.map((s) => [s, []]))];
    if (roles.length) op.description = `${op.description ? `${op.description}\n\n` : ''}Roles: ${roles.join(', ')}.`;
    const codes = [
      'ambiguous_credentials',
      ...(access.kind === 'public' ? [] : ['unauthenticated']),
      'invalid_credentials',
      ...(hasBearer ? ['invalid_token', 'token_expired', 'invalid_audience'] : []),
      ...(hasBasic ? ['too_many_requests'] : []),
      ...(roles.length || (kind.resource && rules.has(kind.resource)) ? ['forbidden'] : []),
    ];
    const responses = (op.responses ?? {}) as Record<string, OpenApiObject>;
    const merged = errorResponses(plan.errors, [...documentedCodes(responses), ...codes]);
    const success = Object.fromEntries(Object.entries(responses).filter(([status]) => Number(status) < 400));
    op.responses = { ...success, ...merged };
  }
};
