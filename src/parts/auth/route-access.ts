import type { Static } from '@sinclair/typebox';
import type { Plan } from '../../plan/types.ts';
import type { AccessSchema, ResourceEndpointsSpec } from '../endpoints/schema.ts';
import type { Access } from './authenticate.ts';

type AccessSpec = Static<typeof AccessSchema>;

/** What a compiled route is, as far as access goes. */
export interface RouteKind {
  readonly resource?: string;
  /** An operation (list, get, …), `history`, a transition name, or a custom endpoint's name. */
  readonly action: string;
  readonly transition?: boolean;
  readonly custom?: boolean;
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
