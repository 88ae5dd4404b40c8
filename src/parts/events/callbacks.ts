import type { Plan } from '../../plan/types.ts';
import type { RuntimeContext, WriteHook } from '../../runtime/context.ts';
import type { RouteSpec } from '../../runtime/route-spec.ts';
import { ApiError } from '../errors/api-error.ts';
import { newWebhookSecret } from './signing.ts';
import { staticTargetProblem } from './targets.ts';

/** The owner subject of callback consumers: no caller can have it, so no caller ever sees them as its endpoints. */
const CALLBACK_OWNER = '\u0000callbacks';
const SECRET_ENV = 'NINEFOLD_CALLBACK_SECRET';

export const hasCallbacks = (plan: Plan): boolean => plan.events.callbacks.size > 0;
export const callbackEndpointId = (resource: string): string => `cb_${resource}`;

/**
 * A callback URL is checked when it is written: not an http(s) URL, credentials in it, or an address that is
 * loopback, private or link-local (unless the spec allows private targets) answer 422 and nothing is stored.
 * What a name resolves to is checked at connect time, as for webhooks.
 */
export const callbackUrlHook = (ctx: RuntimeContext): WriteHook | undefined => {
  const { callbacks } = ctx.plan.events;
  const allowPrivate = ctx.plan.events.delivery.allowPrivateTargets;
  if (callbacks.size === 0) return undefined;
  return (event) => {
    if (event.kind !== 'created' && event.kind !== 'updated') return;
    const field = callbacks.get(event.resource.name)?.field;
    const url = field ? event.after[field] : undefined;
    if (!field || typeof url !== 'string' || (event.kind === 'updated' && event.before[field] === url)) return;
    const problem = staticTargetProblem(url, allowPrivate);
    if (problem)
      throw new ApiError('invalid_webhook_url', `${field} ${problem}`, [
        { pointer: `#/${field}`, code: 'forbidden_target', message: `${field} ${problem}` },
      ]);
  };
};

/**
 * Each resource with callbacks has one consumer of the outbox (an endpoint row of kind `callback`, whose URL
 * is in each record). Made on first start with a cursor at the end of the outbox; its events follow the spec.
 * Its signing secret is NINEFOLD_CALLBACK_SECRET when set, else one generated and kept in the database.
 */
export const ensureCallbackEndpoints = async (ctx: RuntimeContext): Promise<void> => {
  const fromEnv = process.env[SECRET_ENV];
  for (const [resource, callback] of ctx.plan.events.callbacks) {
    const id = callbackEndpointId(resource);
    const existing = await ctx.store.webhooks.getEndpoint(id);
    const cursor = await ctx.store.events.lastSeq();
    await ctx.store.transaction(async () => {
      if (!existing) {
        await ctx.store.webhooks.createEndpoint({
          id,
          kind: 'callback',
          url: '',
          events: [...callback.events],
          secret: fromEnv ?? newWebhookSecret(),
          ownerSubject: CALLBACK_OWNER,
          ownerRoles: [],
          createdAt: ctx.now().toISOString(),
          cursor,
        });
      } else {
        await ctx.store.webhooks.updateEndpoint(id, {
          events: [...callback.events],
          ...(fromEnv && fromEnv !== existing.secret ? { secret: fromEnv } : {}),
        });
      }
    });
  }
};

/**
 * `GET /_ninefold/callbacks` (a built-in `admin` route: the admin role): per resource, the field, the events, the
 * signing secret to give receivers, and the last 100 deliveries with every attempt.
 */
export const callbackAdminRoute = (ctx: RuntimeContext): RouteSpec => ({
  method: 'GET',
  path: '/_ninefold/callbacks',
  operation: 'callbacks.list',
  kind: { action: 'callbacks', builtIn: 'admin' },
  body: 'none',
  handler: async () => {
    const data = [];
    for (const [resource, callback] of ctx.plan.events.callbacks) {
      const id = callbackEndpointId(resource);
      const endpoint = await ctx.store.webhooks.getEndpoint(id);
      data.push({
        resource,
        field: callback.field,
        events: callback.events,
        secret: endpoint?.secret ?? null,
        deliveries: await ctx.store.webhooks.listDeliveries(id, 100),
      });
    }
    return {
      status: 200,
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ data }),
    };
  },
});
