import type { LookupFunction } from 'node:net';
import type { HandlerInput, HandlerOutput, RuntimeContext } from '../../runtime/context.ts';
import type { RouteSpec } from '../../runtime/route-spec.ts';
import type { WebhookEndpoint } from '../../storage/index.ts';
import { ApiError, type FieldError } from '../errors/api-error.ts';
import { newEventId } from '../resources/record-io.ts';
import { newWebhookSecret } from './signing.ts';
import { resolveWith, targetProblem } from './targets.ts';

const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8' };
const ROTATION_OVERLAP_MS = 24 * 3_600_000;

/** An endpoint as its owner sees it: never the secret (that is shown once, on create and on rotation). */
const shown = (e: WebhookEndpoint) => ({
  id: e.id,
  url: e.url,
  events: e.events,
  ...(e.description ? { description: e.description } : {}),
  ...(e.apiVersion ? { apiVersion: e.apiVersion } : {}),
  createdAt: e.createdAt,
  disabled: e.disabledAt !== undefined,
  ...(e.disabledAt ? { disabledAt: e.disabledAt, disabledReason: e.disabledReason } : {}),
});

/**
 * `/webhook-endpoints`: each caller registers, lists and manages its own receivers. Events reach an endpoint only
 * when its owner may read their record; the secret is shown on create and on rotation only.
 */
export const webhookRoutes = (
  ctx: RuntimeContext,
  /** The resolver deliveries connect through: a URL's host is checked with the same answers. */
  lookup?: LookupFunction,
): RouteSpec[] => {
  const resolve = lookup ? resolveWith(lookup) : undefined;
  const base = '/webhook-endpoints';
  const known = new Set(ctx.plan.events.types);
  const offered = ctx.plan.events.webhooks?.events;
  const allowPrivate = ctx.plan.events.delivery.allowPrivateTargets;
  const versions = ctx.plan.versioning?.ids;
  // Event types a version does not have (added after it, or removed in it or before): not subscribable there.
  const absent = (version: unknown) =>
    typeof version === 'string' ? ctx.plan.versioning?.absent.get(version) : undefined;

  const validate = async (body: unknown, creating: boolean, version: string | undefined) => {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw new ApiError('validation_failed', 'The body must be an object.');
    }
    const b = body as Record<string, unknown>;
    const problems: FieldError[] = [];
    for (const k of Object.keys(b)) {
      const known = ['url', 'events', 'description', 'disabled', ...(versions ? ['apiVersion'] : [])];
      if (!known.includes(k) || (creating && k === 'disabled'))
        problems.push({ pointer: `#/${k}`, code: 'unknown_field', message: `${k} is not a field of an endpoint` });
    }
    if (creating && b.url === undefined)
      problems.push({ pointer: '#/url', code: 'required', message: 'url is required' });
    if (b.url !== undefined) {
      const why =
        typeof b.url === 'string' && b.url.length <= 2048
          ? await targetProblem(b.url, allowPrivate, resolve)
          : 'must be a URL';
      if (why) problems.push({ pointer: '#/url', code: 'forbidden_target', message: `url ${why}` });
    }
    if (b.events !== undefined) {
      const missing = absent(b.apiVersion ?? version);
      if (
        !Array.isArray(b.events) ||
        b.events.some(
          (e) => typeof e !== 'string' || !known.has(e) || (offered && !offered.includes(e)) || missing?.has(e),
        )
      )
        problems.push({
          pointer: '#/events',
          code: 'invalid_enum',
          message: 'events must be event types of this service',
        });
    }
    if (b.description !== undefined && (typeof b.description !== 'string' || b.description.length > 500))
      problems.push({ pointer: '#/description', code: 'invalid_type', message: 'description must be a string' });
    if (b.apiVersion !== undefined && !versions?.includes(b.apiVersion as string))
      problems.push({
        pointer: '#/apiVersion',
        code: 'invalid_enum',
        message: `apiVersion must be one of ${versions?.join(', ')}`,
      });
    if (b.disabled !== undefined && b.disabled !== false)
      problems.push({
        pointer: '#/disabled',
        code: 'invalid_enum',
        message: 'disabled may only be set to false (re-enable)',
      });
    const target = problems.find((p) => p.code === 'forbidden_target');
    if (target) throw new ApiError('invalid_webhook_url', target.message, problems);
    if (problems.length)
      throw new ApiError('validation_failed', `${problems.length} field(s) failed validation.`, problems);
    return b;
  };

  const own = async ({ params, principal }: HandlerInput) => {
    const id = params.id ?? '';
    const endpoint = await ctx.store.webhooks.getEndpoint(id);
    if (endpoint?.kind !== 'webhook' || endpoint.ownerSubject !== (principal?.subject ?? '')) {
      throw new ApiError('not_found', `No webhook endpoint ${id}.`);
    }
    return endpoint;
  };
  const json = (status: number, value: unknown, extra?: Record<string, string>): HandlerOutput => ({
    status,
    headers: { ...JSON_TYPE, ...extra },
    body: JSON.stringify(value),
  });
  const kind = { action: 'webhooks', builtIn: 'api' } as const;
  const route = (
    method: RouteSpec['method'],
    path: string,
    operation: string,
    handler: RouteSpec['handler'],
    extra: Partial<RouteSpec> = {},
  ): RouteSpec => ({
    method,
    path: `${base}${path}`,
    operation: `webhooks.${operation}`,
    kind,
    body: 'none',
    handler,
    ...extra,
  });

  return [
    route(
      'POST',
      '',
      'create',
      async (input) => {
        const b = input.body as Record<string, unknown>;
        const nowMs = ctx.now().getTime();
        const endpoint: WebhookEndpoint = {
          id: `we_${newEventId(nowMs).slice(4)}`,
          kind: 'webhook',
          // Events from now on: the ones already in the outbox are there to read, not to be sent.
          cursor: await ctx.store.events.lastSeq(),
          url: b.url as string,
          events: (b.events as string[] | undefined) ?? [],
          secret: newWebhookSecret(),
          ...(typeof b.description === 'string' ? { description: b.description } : {}),
          // Pinned to the version it was registered in, unless it names one (versioning part).
          ...(versions
            ? { apiVersion: (b.apiVersion as string | undefined) ?? input.apiVersion ?? versions.at(-1) }
            : {}),
          ownerSubject: input.principal?.subject ?? '',
          ownerRoles: input.principal?.roles ?? [],
          createdAt: new Date(nowMs).toISOString(),
        };
        await ctx.store.webhooks.createEndpoint(endpoint);
        return json(
          201,
          { ...shown(endpoint), secret: endpoint.secret },
          { location: `${ctx.plan.service.basePath}${base}/${endpoint.id}` },
        );
      },
      { body: 'json', validate: (input) => validate(input.body, true, input.apiVersion).then(() => undefined) },
    ),
    route('GET', '', 'list', async ({ principal }) =>
      json(200, { data: (await ctx.store.webhooks.listEndpoints(principal?.subject ?? '')).map(shown) }),
    ),
    route('GET', '/{id}', 'get', async (input) => json(200, shown(await own(input)))),
    route(
      'PATCH',
      '/{id}',
      'update',
      async (input) => {
        const endpoint = await own(input);
        const b = input.body as Record<string, unknown>;
        const changes: Partial<WebhookEndpoint> = {
          ...(typeof b.url === 'string' ? { url: b.url } : {}),
          ...(Array.isArray(b.events) ? { events: b.events as string[] } : {}),
          ...(typeof b.description === 'string' ? { description: b.description } : {}),
          ...(typeof b.apiVersion === 'string' ? { apiVersion: b.apiVersion } : {}),
          ...(b.disabled === false
            ? { disabledAt: undefined, disabledReason: undefined, failingSince: undefined }
            : {}),
        };
        // Re-enabled: deliveries resume with events from now on (those written meanwhile stay in GET /events).
        const resumeAt = b.disabled === false && endpoint.disabledAt ? await ctx.store.events.lastSeq() : undefined;
        await ctx.store.webhooks.updateEndpoint(endpoint.id, changes);
        if (resumeAt !== undefined) await ctx.store.webhooks.moveCursor(endpoint.id, resumeAt);
        const updated = (await ctx.store.webhooks.getEndpoint(endpoint.id)) as WebhookEndpoint;
        return json(200, shown(updated));
      },
      { body: 'json', validate: (input) => validate(input.body, false, input.apiVersion).then(() => undefined) },
    ),
    route('DELETE', '/{id}', 'delete', async (input) => {
      const endpoint = await own(input);
      await ctx.store.webhooks.deleteEndpoint(endpoint.id);
      return { status: 204 };
    }),
    route('POST', '/{id}/rotate-secret', 'rotateSecret', async (input) => {
      const endpoint = await own(input);
      const secret = newWebhookSecret();
      const previousUntil = new Date(ctx.now().getTime() + ROTATION_OVERLAP_MS).toISOString();
      await ctx.store.webhooks.updateEndpoint(endpoint.id, { secret, previousSecret: endpoint.secret, previousUntil });
      return json(200, { id: endpoint.id, secret, previousSecretValidUntil: previousUntil });
    }),
    route('GET', '/{id}/deliveries', 'deliveries', async (input) => {
      const endpoint = await own(input);
      return json(200, { data: await ctx.store.webhooks.listDeliveries(endpoint.id, 100) });
    }),
    route('POST', '/{id}/deliveries/{delivery}/retry', 'retryDelivery', async (input) => {
      const endpoint = await own(input);
      const id = Number(input.params.delivery);
      const delivery = Number.isSafeInteger(id) ? await ctx.store.webhooks.getDelivery(id) : undefined;
      if (!delivery || delivery.endpointId !== endpoint.id) throw new ApiError('not_found', 'No such delivery.');
      if (delivery.state === 'pending') throw new ApiError('conflict', 'The delivery is still being tried.');
      await ctx.store.webhooks.retry(id, ctx.now().toISOString());
      return json(202, { id, state: 'pending' });
    }),
  ];
};
