import { randomUUID } from 'node:crypto';
import { lookup as dnsLookup } from 'node:dns';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import type { RuntimeContext } from '../../runtime/context.ts';
import { parseDuration } from '../../spec/units.ts';
import type { Delivery, DeliveryAttempt, WebhookEndpoint } from '../../storage/index.ts';
import { signature } from './signing.ts';
import { isBlockedAddress } from './targets.ts';
import { createEventFilter } from './visible.ts';

export const DEFAULT_RETRY = ['5s', '5m', '30m', '2h', '5h', '10h', '10h', '24h'];
const MAX_RESPONSE_BYTES = 64 * 1024;
/** Deliveries in flight at once per endpoint. */
const PER_ENDPOINT = 8;
/** Deliveries claimed (leased) at most at a time by one process. */
const CLAIM = 64;
/** A lease outlives one attempt by this much; claimed deliveries start at once, so it never runs out early. */
const LEASE_SLACK_MS = 5_000;
const MIN_POLL_MS = 5;

interface Answer {
  readonly status?: number;
  readonly retryAfterMs?: number;
  readonly error?: string;
}

/** Refuses, at connect time, a host that now resolves to a blocked address (DNS rebinding). */
const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: false }, (error, address, family) => {
    if (error) return callback(error, '', 0);
    if (isBlockedAddress(String(address))) {
      return callback(Object.assign(new Error('blocked address'), { code: 'EBLOCKED' }), '', 0);
    }
    callback(null, address as string, family as number);
  });
};

/** One POST, no redirects followed, bounded in time and in how much of the answer is read. */
const post = (
  url: string,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
  allowPrivate: boolean,
): Promise<Answer> =>
  new Promise((resolve) => {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return resolve({ error: 'invalid URL' });
    }
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(
      target,
      {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
        timeout: timeoutMs,
        ...(allowPrivate ? {} : { lookup: guardedLookup }),
      },
      (res) => {
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_RESPONSE_BYTES) res.destroy();
        });
        const retryAfter = res.headers['retry-after'];
        const seconds = retryAfter === undefined ? Number.NaN : Number(retryAfter);
        const date = retryAfter === undefined ? Number.NaN : Date.parse(retryAfter);
        const retryAfterMs = Number.isFinite(seconds)
          ? seconds * 1000
          : Number.isFinite(date)
            ? date - Date.now()
            : undefined;
        const done = () =>
          resolve({ status: res.statusCode ?? 0, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) });
        res.on('end', done);
        res.on('close', done);
        res.on('error', done);
      },
    );
    req.on('timeout', () => req.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })));
    req.on('error', (error: NodeJS.ErrnoException) =>
      resolve({
        error:
          error.code === 'EBLOCKED'
            ? 'blocked address'
            : error.code === 'ETIMEDOUT'
              ? 'timeout'
              : (error.code ?? 'connection failed'),
      }),
    );
    req.end(body);
  });

/**
 * Delivers queued webhook deliveries: due ones are leased (so two processes never send the same attempt at
 * once), sent one at a time per endpoint and in parallel across endpoints, signed the Standard Webhooks way
 * with a fresh timestamp per attempt and the same `webhook-id` on every attempt. 2xx delivers; 410 disables
 * the endpoint; anything else retries on the schedule (with ±10% jitter, or after Retry-After when the
 * receiver asks for longer); a delivery out of retries fails and disables its endpoint.
 */
export const startWebhookWorker = (ctx: RuntimeContext, pollMs = 250) => {
  const config = ctx.plan.spec.events?.webhooks ?? {};
  const schedule = (config.retry ?? DEFAULT_RETRY).map((d) => parseDuration(d) ?? 60_000);
  const timeoutMs = Math.min(parseDuration(config.timeout ?? '15s') ?? 15_000, 30_000);
  const allowPrivate = config.allowPrivateTargets === true;
  const visible = createEventFilter(ctx);
  const owner = `worker-${randomUUID()}`;
  const inFlight = new Set<Promise<void>>();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;

  const attempt = async (delivery: Delivery) => {
    const endpoint = await ctx.store.webhooks.getEndpoint(delivery.endpointId);
    const event = await ctx.store.events.get(delivery.eventId);
    const nowMs = ctx.now().getTime();
    const at = new Date(nowMs).toISOString();
    const finish = (
      log: DeliveryAttempt,
      next: Parameters<typeof ctx.store.webhooks.recordAttempt>[2],
      disable?: string,
    ) =>
      ctx.store.transaction(async () => {
        await ctx.store.webhooks.recordAttempt(delivery.id, log, next);
        if (disable && endpoint)
          await ctx.store.webhooks.updateEndpoint(endpoint.id, { disabledAt: at, disabledReason: disable });
      });
    if (!endpoint || endpoint.disabledAt || !event) {
      return finish(
        { at, durationMs: 0, error: endpoint?.disabledAt ? 'endpoint disabled' : 'endpoint or event gone' },
        { state: 'failed' },
      );
    }
    const view = visible(event, {
      subject: endpoint.ownerSubject,
      roles: endpoint.ownerRoles,
      scheme: 'webhook',
      claims: {},
    });
    if (!view) return finish({ at, durationMs: 0, error: 'not visible to the endpoint owner' }, { state: 'failed' });
    const body = JSON.stringify(view);
    const timestamp = Math.floor(nowMs / 1000);
    const signatures = [signature(endpoint.secret, event.id, timestamp, body)];
    if (endpoint.previousSecret && endpoint.previousUntil && Date.parse(endpoint.previousUntil) > nowMs) {
      signatures.push(signature(endpoint.previousSecret, event.id, timestamp, body));
    }
    const started = performance.now();
    const answer = await post(
      endpoint.url,
      {
        'webhook-id': event.id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signatures.join(' '),
        'user-agent': 'ninefold-webhooks',
      },
      body,
      timeoutMs,
      allowPrivate,
    );
    const log: DeliveryAttempt = {
      at,
      durationMs: performance.now() - started,
      ...(answer.status !== undefined ? { status: answer.status } : {}),
      ...(answer.error ? { error: answer.error } : {}),
    };
    if (answer.status !== undefined && answer.status >= 200 && answer.status < 300) {
      return finish(log, { state: 'delivered' });
    }
    if (answer.status === 410) return finish(log, { state: 'failed' }, 'the receiver answered 410 Gone');
    const delay = schedule[delivery.attempts];
    if (delay === undefined) {
      return finish(log, { state: 'failed' }, `deliveries kept failing (last: ${answer.status ?? answer.error})`);
    }
    const jittered = delay * (0.9 + Math.random() * 0.2);
    const wait = Math.max(jittered, Math.min(answer.retryAfterMs ?? 0, 24 * 3_600_000));
    return finish(log, { state: 'pending', at: new Date(nowMs + wait).toISOString() });
  };

  // Claimed deliveries wait here per endpoint; each endpoint runs at most PER_ENDPOINT at once, so one slow
  // receiver holds up only its own queue.
  const queues = new Map<string, Delivery[]>();
  /** Deliveries this process holds (queued or running): a lease that ran out is not taken a second time. */
  const held = new Set<number>();
  const running = new Map<string, number>();
  let queued = 0;

  const pump = (endpointId: string) => {
    const queue = queues.get(endpointId);
    while (queue?.length && (running.get(endpointId) ?? 0) < PER_ENDPOINT) {
      const delivery = queue.shift() as Delivery;
      queued--;
      running.set(endpointId, (running.get(endpointId) ?? 0) + 1);
      const run = attempt(delivery)
        .catch(() => undefined)
        .finally(() => {
          inFlight.delete(run);
          held.delete(delivery.id);
          running.set(endpointId, (running.get(endpointId) ?? 1) - 1);
          pump(endpointId);
          if (queued < CLAIM / 2) wake();
        });
      inFlight.add(run);
    }
    if (queue?.length === 0) queues.delete(endpointId);
  };

  let polling = false;
  const poll = async () => {
    timer = undefined;
    if (stopped || polling) return;
    polling = true;
    let claimed = 0;
    try {
      if (queued + inFlight.size < CLAIM) {
        const due = await ctx.store.transaction(() =>
          ctx.store.webhooks.claimDue(ctx.now(), owner, timeoutMs + LEASE_SLACK_MS, CLAIM - queued - inFlight.size),
        );
        claimed = due.length;
        for (const delivery of due) {
          if (held.has(delivery.id)) continue;
          held.add(delivery.id);
          const queue = queues.get(delivery.endpointId) ?? [];
          queue.push(delivery);
          queues.set(delivery.endpointId, queue);
          queued++;
        }
        for (const endpointId of new Set(due.map((d) => d.endpointId))) pump(endpointId);
      }
    } catch {
      // The database was busy or closing: the next poll tries again.
    } finally {
      polling = false;
    }
    // A full claim means more may be due: look again soon; otherwise at the regular pace.
    if (!stopped && !timer) timer = setTimeout(poll, claimed === CLAIM ? MIN_POLL_MS : pollMs);
  };
  const wake = () => {
    if (stopped || polling) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(poll, MIN_POLL_MS);
  };
  timer = setTimeout(poll, 0);
  return {
    wake,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await Promise.allSettled([...inFlight]);
    },
  };
};

export type WebhookEndpointView = Omit<WebhookEndpoint, 'secret' | 'previousSecret' | 'previousUntil' | 'ownerRoles'>;
