import type { Plan } from '../../plan/types.ts';
import { errorResponses } from '../errors/openapi.ts';
import type { BuiltInOperation, OpenApiObject } from '../openapi-model.ts';
import { type RouteKind, routeAccess } from './route-access.ts';
import { securitySchemeOf } from './security-scheme.ts';

/** components.securitySchemes: each scheme with its credential's name and place. */
export const securitySchemes = (plan: Plan): Record<string, OpenApiObject> =>
  Object.fromEntries([...plan.auth.schemes].map(([name, s]) => [name, securitySchemeOf(s, plan.auth.keyPrefix)]));

/** Every operation the runtime serves, with what it is for access control. */
export const routeKinds = (
  plan: Plan,
  builtIns: readonly BuiltInOperation[],
): Array<{ method: string; path: string; kind: RouteKind }> => {
  const base = plan.service.basePath;
  const out: Array<{ method: string; path: string; kind: RouteKind }> = builtIns.map(({ method, path, kind }) => ({
    method,
    path,
    kind,
  }));
  for (const r of plan.resources) {
    for (const route of r.routes)
      out.push({
        method: route.method.toLowerCase(),
        path: `${base}${route.path}`,
        kind: { resource: r.name, action: route.operation },
      });
    for (const t of r.states?.transitions ?? [])
      out.push({
        method: 'post',
        path: `${base}${r.itemPath}/${t.path}`,
        kind: { resource: r.name, action: t.name, transition: true },
      });
    if (r.states)
      out.push({ method: 'get', path: `${base}${r.itemPath}/history`, kind: { resource: r.name, action: 'history' } });
    for (const l of r.lists)
      out.push({ method: 'get', path: `${base}${l.path}`, kind: { resource: r.name, action: 'list' } });
    // A relation takes its join resource's create and delete access.
    if (r.relation)
      for (const [method, action] of [
        [r.relation.add.toLowerCase(), 'create'],
        ['delete', 'delete'],
      ] as const)
        out.push({ method, path: `${base}${r.relation.path}`, kind: { resource: r.name, action } });
    if (r.session)
      out.push({ method: 'post', path: `${base}${r.session.signIn}`, kind: { resource: r.name, action: 'signIn' } });
  }
  for (const c of plan.custom)
    out.push({ method: c.method.toLowerCase(), path: `${base}${c.path}`, kind: { action: c.name, custom: true } });
  return out;
};

/** The codes an existing responses object already documents (a $ref per code, or examples keyed by code). */
export const documentedCodes = (responses: OpenApiObject): string[] =>
  Object.values(responses).flatMap((r) => {
    const ref = (r as { $ref?: string }).$ref;
    if (ref?.startsWith('#/components/responses/')) return [ref.slice('#/components/responses/'.length)];
    const content = (r as { content?: Record<string, { examples?: Record<string, unknown> }> }).content;
    return Object.values(content ?? {}).flatMap((m) => Object.keys(m.examples ?? {}));
  });

/**
 * Sets `security` on every operation (`[]` on a public one) and adds the answers authentication and authorisation
 * can give. Without schemes every operation is public.
 */
export const applySecurity = (
  plan: Plan,
  paths: Record<string, OpenApiObject>,
  builtIns: readonly BuiltInOperation[],
) => {
  const schemes = [...plan.auth.schemes.values()];
  if (schemes.length === 0) {
    for (const item of Object.values(paths)) for (const op of Object.values(item)) (op as OpenApiObject).security = [];
    return;
  }
  const hasBasic = schemes.some((s) => s.type === 'basic');
  const hasBearer = schemes.some((s) => s.type === 'bearer' || s.type === 'oidc');
  const { rules } = plan.auth;
  for (const { method, path, kind } of routeKinds(plan, builtIns)) {
    const op = (paths[path] as Record<string, OpenApiObject> | undefined)?.[method] as OpenApiObject | undefined;
    if (!op) continue;
    const { access, roles } = routeAccess(plan, kind);
    op.security =
      access.kind === 'public'
        ? []
        : access.kind === 'any'
          ? access.schemes.map((s) => ({ [s]: [] }))
          : [Object.fromEntries(access.schemes.map((s) => [s, []]))];
    // A public built-in page does not look at credentials at all (auth-part.ts): no answer about them.
    if (access.kind === 'public' && kind.builtIn && kind.builtIn !== 'api' && kind.builtIn !== 'admin') continue;
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

/**
 * A resource's `owner` field is filled from the caller on create: not required in the create body (it may name
 * the caller, or anyone where an explicit create rule allows), and never changed by an update, so not in a patch.
 */
export const applyOwnerFields = (plan: Plan, schemas: Record<string, OpenApiObject>) => {
  for (const resource of plan.resources) {
    const owner = plan.auth.rules.get(resource.name)?.owner;
    if (!owner) continue;
    const explicit = plan.auth.rules.get(resource.name)?.create !== undefined;
    const create = schemas[`${resource.name}Create`];
    const properties = create?.properties as Record<string, OpenApiObject> | undefined;
    if (create && properties?.[owner]) {
      const note = explicit
        ? 'Defaults to the caller’s subject; naming someone else needs the create rule to allow it.'
        : 'Set to the caller’s subject; it may only name the caller.';
      const field = properties[owner];
      properties[owner] = { ...field, description: field.description ? `${field.description} ${note}` : note };
      const required = (create.required as string[] | undefined)?.filter((n) => n !== owner) ?? [];
      if (required.length) create.required = required;
      else delete create.required;
    }
    const patch = schemas[`${resource.name}Patch`];
    if (patch?.properties) {
      const { [owner]: _, ...rest } = patch.properties as Record<string, OpenApiObject>;
      patch.properties = rest;
    }
  }
};
