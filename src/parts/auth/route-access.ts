import type { Plan } from '../../plan/types.ts';
import type { RouteAccess } from './plan.ts';
import type { BuiltInPage } from './schema.ts';

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

/** Who may call a route and with which roles, as the plan resolved it. */
export const routeAccess = (plan: Plan, route: RouteKind): RouteAccess => {
  const { auth } = plan;
  if (auth.schemes.size === 0) return { access: { kind: 'public' }, roles: [] };
  if (route.builtIn === 'api') return { access: auth.require, roles: [] };
  if (route.builtIn === 'admin')
    return { access: { kind: 'any', schemes: [...auth.schemes.keys()] }, roles: [ADMIN_ROLE] };
  if (route.builtIn)
    return { access: auth.publicPages.has(route.builtIn) ? { kind: 'public' } : auth.require, roles: [] };
  const key = route.custom
    ? route.action
    : `${route.resource ?? ''}.${route.action === 'history' ? 'get' : route.action}`;
  return auth.routes.get(key) ?? { access: auth.require, roles: [] };
};
