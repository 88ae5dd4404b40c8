import type { Exchange } from '../../runtime/lifecycle.ts';
import type { ServerPart } from '../../runtime/part.ts';
import { ApiError } from '../errors/api-error.ts';
import { type AuthRequest, createAuthenticator } from './authenticate.ts';
import { keyAdminRoutes } from './key-admin.ts';
import type { Principal } from './principal.ts';
import { routeAccess } from './route-access.ts';

/**
 * The auth part on the server: the authenticate step of every route (who is calling, and whether they may call
 * this route at all: its schemes and roles), answered before the body is read; and the key admin API.
 * Per-record rules run where handlers load records (access.ts). A spec without schemes adds no step at all.
 */
export const authPart: ServerPart = {
  name: 'auth',
  install(host) {
    const { plan, ctx } = host;
    const auth = createAuthenticator(plan, ctx.store, ctx.now, (message) => host.log.warn({}, message), ctx.counters);
    if (!auth.enabled) return;
    host.step('authenticate', (route) => {
      const { access, roles } = routeAccess(plan, route.kind);
      // A public built-in page (health, docs) does not look at credentials at all.
      if (
        route.kind.builtIn &&
        route.kind.builtIn !== 'api' &&
        route.kind.builtIn !== 'admin' &&
        access.kind === 'public'
      )
        return undefined;
      const refused = () => new ApiError('forbidden', `This needs one of the roles ${roles.join(', ')}.`);
      const accept = (exchange: Exchange, principal: Principal | undefined) => {
        if (roles.length > 0 && !principal?.roles.some((r) => roles.includes(r))) throw refused();
        exchange.principal = principal;
        // An answer made for one caller is not for a shared cache.
        if (principal) exchange.reply.header('cache-control', 'no-store');
      };
      const identify = (exchange: Exchange) =>
        auth.authenticate(exchange.request as typeof exchange.request & AuthRequest, access);
      return (exchange) => {
        exchange.reauthenticate = async () => identify(exchange);
        const found = identify(exchange);
        if (found instanceof Promise) return found.then((principal) => accept(exchange, principal));
        accept(exchange, found);
      };
    });
    for (const route of keyAdminRoutes(ctx)) host.route(route);
  },
};
