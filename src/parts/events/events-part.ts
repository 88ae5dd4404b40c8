import type { ServerPart } from '../../runtime/part.ts';
import { callbackAdminRoute, callbackUrlHook, ensureCallbackEndpoints, hasCallbacks } from './callbacks.ts';
import { outboxHook } from './emit.ts';
import { eventLogRoutes } from './event-log-routes.ts';
import { streamRoute } from './stream.ts';
import { webhookRoutes } from './webhook-routes.ts';
import { startWebhookWorker } from './webhook-worker.ts';

/**
 * The events part on the server: the outbox hook (an event per change, in the change's transaction), the
 * callback URL check, the event log and stream, webhook endpoints, the callbacks admin route, and the delivery
 * worker, which wakes when events are appended and polls for due retries.
 */
export const eventsPart: ServerPart = {
  name: 'events',
  install(host) {
    const { ctx, plan, options } = host;
    const outbox = outboxHook(ctx);
    if (outbox) host.writeHook(outbox);
    const callbackUrls = callbackUrlHook(ctx);
    if (callbackUrls) host.writeHook(callbackUrls);
    if (plan.events.types.length === 0) return;

    for (const route of eventLogRoutes(ctx)) host.route(route);
    host.route(streamRoute(ctx, host));
    const webhooks = plan.events.webhooks !== undefined;
    if (webhooks) for (const route of webhookRoutes(ctx, options.lookup)) host.route(route);
    // The admin route needs a caller with the admin role: a spec without schemes has no one to show secrets to.
    if (hasCallbacks(plan) && plan.auth.schemes.size > 0) host.route(callbackAdminRoute(ctx));
    if (!webhooks && !hasCallbacks(plan)) return;
    host.worker('webhooks', async (health) => {
      await ensureCallbackEndpoints(ctx);
      const running = startWebhookWorker(ctx, {
        ...(options.webhookPollMs !== undefined ? { pollMs: options.webhookPollMs } : {}),
        ...(options.lookup ? { lookup: options.lookup } : {}),
        requests: host.requests,
        health,
      });
      // The store tells of events appended and endpoints changed, by this process or (where it can) by any other.
      const unsubscribe = [
        ctx.store.signals.subscribe('events', running.wake),
        ctx.store.signals.subscribe('endpoints', running.refresh),
      ];
      return {
        async stop() {
          for (const off of unsubscribe) off();
          await running.stop();
        },
        cut: running.cut,
      };
    });
  },
};
