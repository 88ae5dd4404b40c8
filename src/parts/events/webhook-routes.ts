import type { LookupFunction } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RuntimeContext } from '../../runtime/context.ts';
import type { WebhookEndpoint } from '../../storage/index.ts';
import type { Principal } from '../auth/principal.ts';
import { ApiError, type FieldError } from '../errors/api-error.ts';
import { newEventId } from '../resources/record-io.ts';
import { knownEventNames } from './event-names.ts';
import { newWebhookSecret } from './signing.ts';
import { resolveWith, targetProblem } from './targets.ts';

type Identify = (request: FastifyRequest) => Promise<Principal | undefined>;
const JSON_TYPE = 'application/json; charset=utf-8';
const ROTATION_OVERLAP_MS = 24 * 3_600_000;

/** An endpoint as its owner sees it: never the secret (that is shown once, on create and on rotation). */
const shown = (e: WebhookEndpoint) => ({
  id: e.id,
  url: e.url,
  events: e.events,
  ...(e.description ? { description: e.description } : {}),
  createdAt: e.createdAt,
  disabled: e.disabledAt !== undefined,
  ...(e.disabledAt ? { disabledAt: e.disabledAt, disabledReason: e.disabledReason } : {}),
});

/**
 * `/webhook-endpoints`: each caller registers, lists and manages its own receivers. Events reach an endpoint only
 * when its owner may read their record; the secret is shown on create and on rotation only.
 */
export const registerWebhookRoutes = (
  app: FastifyInstance,
  ctx: RuntimeContext,
  identify: Identify,
  changed: () => void,
  /** The resolver deliveries connect through: a URL's host is checked with the same answers. */
  lookup?: LookupFunction,
) => {
  const resolve = lookup ? resolveWith(lookup) : undefined;
  const base = `${ctx.plan.service.basePath}/webhook-endpoints`;
  const known = new Set(knownEventNames(ctx.plan.spec));
  const offered = ctx.plan.spec.events?.webhooks?.events;
  const allowPrivate = ctx.plan.spec.events?.webhooks?.allowPrivateTargets === true;

  const validate = async (body: unknown, creating: boolean) => {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw new ApiError('validation_failed', 'The body must be an object.');
    }
    const b = body as Record<string, unknown>;
    const problems: FieldError[] = [];
    for (const k of Object.keys(b)) {
      if (!['url', 'events', 'description', 'disabled'].includes(k) || (creating && k === 'disabled'))
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
      if (
        !Array.isArray(b.events) ||
        b.events.some((e) => typeof e !== 'string' || !known.has(e) || (offered && !offered.includes(e)))
      )
        problems.push({
          pointer: '#/events',
          code: 'invalid_enum',
          message: 'events must be event types of this service',
        });
    }
    if (b.description !== undefined && (typeof b.description !== 'string' || b.description.length > 500))
      problems.push({ pointer: '#/description', code: 'invalid_type', message: 'description must be a string' });
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

  const own = async (request: FastifyRequest) => {
    const principal = await identify(request);
    const { id } = request.params as { id: string };
    const endpoint = await ctx.store.webhooks.getEndpoint(id);
    if (endpoint?.kind !== 'webhook' || endpoint.ownerSubject !== (principal?.subject ?? '')) {
      throw new ApiError('not_found', `No webhook endpoint ${id}.`);
    }
    return { principal, endpoint };
  };

  app.post(base, async (request, reply) => {
    const principal = await identify(request);
    const b = await validate(request.body, true);
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
      ownerSubject: principal?.subject ?? '',
      ownerRoles: principal?.roles ?? [],
      createdAt: new Date(nowMs).toISOString(),
    };
    await ctx.store.transaction(() => ctx.store.webhooks.createEndpoint(endpoint));
    changed();
    return reply
      .code(201)
      .type(JSON_TYPE)
      .header('location', `${base}/${endpoint.id}`)
      .send({ ...shown(endpoint), secret: endpoint.secret });
  });
  app.get(base, async (request, reply) => {
    const principal = await identify(request);
    const list = await ctx.store.webhooks.listEndpoints(principal?.subject ?? '');
    return reply.type(JSON_TYPE).send({ data: list.map(shown) });
  });
  app.get(`${base}/:id`, async (request, reply) => reply.type(JSON_TYPE).send(shown((await own(request)).endpoint)));
  app.patch(`${base}/:id`, async (request, reply) => {
    const { endpoint } = await own(request);
    const b = await validate(request.body, false);
    const changes: Partial<WebhookEndpoint> = {
      ...(typeof b.url === 'string' ? { url: b.url } : {}),
      ...(Array.isArray(b.events) ? { events: b.events as string[] } : {}),
      ...(typeof b.description === 'string' ? { description: b.description } : {}),
      ...(b.disabled === false ? { disabledAt: undefined, disabledReason: undefined, failingSince: undefined } : {}),
    };
    // Re-enabled: deliveries resume with events from now on (those written meanwhile stay in GET /events).
    const resumeAt = b.disabled === false && endpoint.disabledAt ? await ctx.store.events.lastSeq() : undefined;
    await ctx.store.transaction(async () => {
      await ctx.store.webhooks.updateEndpoint(endpoint.id, changes);
      if (resumeAt !== undefined) await ctx.store.webhooks.moveCursor(endpoint.id, resumeAt);
    });
    changed();
    return reply.type(JSON_TYPE).send(shown((await ctx.store.webhooks.getEndpoint(endpoint.id)) as WebhookEndpoint));
  });
  app.delete(`${base}/:id`, async (request, reply) => {
    const { endpoint } = await own(request);
    await ctx.store.transaction(() => ctx.store.webhooks.deleteEndpoint(endpoint.id));
    changed();
    return reply.code(204).send();
  });
  app.post(`${base}/:id/rotate-secret`, async (request, reply) => {
    const { endpoint } = await own(request);
    const secret = newWebhookSecret();
    const previousUntil = new Date(ctx.now().getTime() + ROTATION_OVERLAP_MS).toISOString();
    await ctx.store.transaction(() =>
      ctx.store.webhooks.updateEndpoint(endpoint.id, { secret, previousSecret: endpoint.secret, previousUntil }),
    );
    changed();
    return reply.type(JSON_TYPE).send({ id: endpoint.id, secret, previousSecretValidUntil: previousUntil });
  });
  app.get(`${base}/:id/deliveries`, async (request, reply) => {
    const { endpoint } = await own(request);
    return reply.type(JSON_TYPE).send({ data: await ctx.store.webhooks.listDeliveries(endpoint.id, 100) });
  });
  app.post(`${base}/:id/deliveries/:delivery/retry`, async (request, reply) => {
    const { endpoint } = await own(request);
    const id = Number((request.params as { delivery: string }).delivery);
    const delivery = Number.isSafeInteger(id) ? await ctx.store.webhooks.getDelivery(id) : undefined;
    if (!delivery || delivery.endpointId !== endpoint.id) throw new ApiError('not_found', 'No such delivery.');
    if (delivery.state === 'pending') throw new ApiError('conflict', 'The delivery is still being tried.');
    await ctx.store.transaction(() => ctx.store.webhooks.retry(id, ctx.now().toISOString()));
    return reply.code(202).type(JSON_TYPE).send({ id, state: 'pending' });
  });
};
