import type { Static } from '@sinclair/typebox';
import type { Plan } from '../../plan/types.ts';
import type { AccessSchema, ResourceEndpointsSpec } from '../endpoints/schema.ts';
import type { Access } from './authenticate.ts';
import type { BuiltInPage } from './schema.ts';

type AccessSpec = Static<typeof AccessSchema>;

/** The role that may manage keys and callbacks over HTTP. */
export const ADMIN_ROLE = 'admin';

/**
 * What a route is, as far as access goes: an operation of a resource, a transition, a custom endpoint, or a
 * built-in route — `api` (events, the stream, webhook endpoints: the default requirement), `admin` (keys and
 * callbacks: any scheme, the admin role) or a built-in page (public unless `auth.public` leaves it out).
 */
export interface RouteKind {
  readonly resource?: string;
  /** An operation (list, get, …), `history`, a transition name, a custom endpoint's name, or a built-in's. */
  readonly action: string;
  readonly transition?: boolean;
  readonly custom?: boolean;
  readonly builtIn?: 'api' | 'admin' | BuiltInPage;
}

const toAccess = (spec: AccessSpec | undefined): Access | undefined => {
  if (spec === undefined) return undefined;
  if (spec === 'public') return { kind: 'public' };
  if (Array.isArray(spec)) return { kind: 'any', schemes: spec };
  return { kind: 'all', schemes: spec.all };
};

/**
 * Who may call a route and with which roles. The most specific word wins: the operation's override, then the
 * resource's endpoints entry, then `auth.require`. A spec with schemes but no `require` protects every endpoint
 * with any of its schemes; a spec without schemes is public.
 */
export const routeAccess = (plan: Plan, route: RouteKind): { access: Access; roles: readonly string[] } => {
  const auth = plan.spec.auth;
  const schemes = Object.keys(auth?.schemes ?? {});
  if (schemes.length === 0) return { access: { kind: 'public' }, roles: [] };
  const fallback = toAccess(auth?.require) ?? { kind: 'any', schemes };
  if (route.builtIn === 'api') return { access: fallback, roles: [] };
  if (route.builtIn === 'admin') return { access: { kind: 'any', schemes }, roles: [ADMIN_ROLE] };
  if (route.builtIn) {
    const open = (auth?.public ?? ['health', 'openapi', 'docs']).includes(route.builtIn);
    return { access: open ? { kind: 'public' } : fallback, roles: [] };
  }
  const endpoints = (plan.spec.endpoints ?? {}) as Record<string, unknown>;
  if (route.custom) {
    const custom = (plan.spec.endpoints?.custom ?? []).find((c) => c.name === route.action);
    return { access: toAccess(custom?.require) ?? fallback, roles: custom?.roles ?? [] };
  }
  const entry = (route.resource ? endpoints[route.resource] : undefined) as ResourceEndpointsSpec | undefined;
  const resourceAccess = toAccess(entry?.require) ?? fallback;
  if (route.transition) {
    const t = plan.resourcesByName.get(route.resource ?? '')?.states?.transitions.find((x) => x.name === route.action);
    return { access: resourceAccess, roles: t?.roles ?? [] };
  }
  const op = route.action === 'history' ? 'get' : route.action;
  const override = (entry?.overrides as Record<string, { require?: AccessSpec; roles?: string[] }> | undefined)?.[op];
  return { access: toAccess(override?.require) ?? resourceAccess, roles: override?.roles ?? [] };
};
