import { type CheckContext, isRecord, recordEntries } from '../../spec/check-context.ts';
import type { PathSegment } from '../../spec/source-map.ts';
import { suggestion } from '../../spec/validate-shape.ts';
import { type Raw, resourceMap, transitionMap } from '../resources/lookup.ts';

/** Every `require` in the spec (top level, per resource, per operation, per custom endpoint), with its path. */
const requirements = (ctx: CheckContext): Array<[unknown, PathSegment[]]> => {
  const found: Array<[unknown, PathSegment[]]> = [];
  if (isRecord(ctx.spec.auth)) found.push([ctx.spec.auth.require, ['auth', 'require']]);
  const endpoints = isRecord(ctx.spec.endpoints) ? ctx.spec.endpoints : {};
  for (const [name, entry] of recordEntries<Raw>(endpoints)) {
    found.push([entry.require, ['endpoints', name, 'require']]);
    for (const [op, override] of recordEntries<Raw>(entry.overrides))
      found.push([override.require, ['endpoints', name, 'overrides', op, 'require']]);
  }
  if (Array.isArray(endpoints.custom))
    for (const [i, c] of endpoints.custom.entries())
      if (isRecord(c)) found.push([c.require, ['endpoints', 'custom', i, 'require']]);
  return found;
};

/** `public`, [a, b] or { all: [a, b] }: each scheme named must be declared. */
export const checkRequirements = (ctx: CheckContext, schemes: string[]) => {
  for (const [access, path] of requirements(ctx)) {
    const list = Array.isArray(access) ? access : isRecord(access) && Array.isArray(access.all) ? access.all : [];
    const at = Array.isArray(access) ? path : [...path, 'all'];
    for (const [i, scheme] of list.entries()) {
      if (typeof scheme === 'string' && !schemes.includes(scheme))
        ctx.report('unknown-scheme', [...at, i], `no scheme "${scheme}"${suggestion(scheme, schemes)}`);
    }
  }
};

/** Roles named by transitions, overrides, custom endpoints, readableBy and writableBy must be declared in auth.roles. */
export const checkRoles = (ctx: CheckContext, declared: string[]) => {
  const check = (roles: unknown, path: PathSegment[]) => {
    if (!Array.isArray(roles)) return;
    for (const [i, role] of roles.entries())
      if (typeof role === 'string' && !declared.includes(role))
        ctx.report(
          'unknown-role',
          [...path, i],
          `role "${role}" is not declared in auth.roles${suggestion(role, declared)}`,
        );
  };
  for (const [name, resource] of resourceMap(ctx.spec)) {
    for (const [t, transition] of transitionMap(resource))
      check(transition.roles, ['resources', name, 'states', 'transitions', t, 'roles']);
    for (const [f, field] of recordEntries<Raw>(resource.fields))
      for (const key of ['readableBy', 'writableBy']) check(field[key], ['resources', name, 'fields', f, key]);
  }
  const endpoints = isRecord(ctx.spec.endpoints) ? ctx.spec.endpoints : {};
  for (const [name, entry] of recordEntries<Raw>(endpoints))
    for (const [op, override] of recordEntries<Raw>(entry.overrides))
      check(override.roles, ['endpoints', name, 'overrides', op, 'roles']);
  if (Array.isArray(endpoints.custom))
    for (const [i, c] of endpoints.custom.entries())
      if (isRecord(c)) check(c.roles, ['endpoints', 'custom', i, 'roles']);
};
