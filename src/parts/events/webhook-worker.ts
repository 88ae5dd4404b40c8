import { AsyncResource } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { LookupFunction } from 'node:net';
import type { RuntimeContext } from '../../runtime/context.ts';
import type { WorkerHealth } from '../../runtime/workers.ts';
import type {
  AttemptRecord,
  DeliveryAttempt,
  StoredEvent,
  WebhookEndpoint,
  WebhookStore,
} from '../../storage/index.ts';
import { createOutcomeRule } from './attempt-outcome.ts';
import { createBatches } from './batches.ts';
import { createDeliveryPace } from './delivery-pace.ts';
import { createPayloads } from './payloads.ts';
import { createSigner } from './signing.ts';
import { type Answer, createPoster } from './webhook-post.ts';

/**
 * Requests in flight at once per endpoint (first tries and retries together). A slot is the POST's: it is free again
 * once the receiver has answered, while the outcome is still being saved (held to the save, a slot cost the POST and
 * a commit, and one endpoint took about as many events a second as a busy API wrote: bench/RESULTS.md, h/h31).
 */
const PER_ENDPOINT = 8;
/** Events read ahead per endpoint. */
const READ_AHEAD = 64;
/** First tries of one endpoint sent but not yet saved (answered or not) past which no more start. */
const UNSAVED_MAX = 2 * READ_AHEAD;
/** Endpoint leases: held this long, renewed (and endpoint settings re-read) this often. */
const LEASE_MS = 10_000;
const RENEW_MS = 2_000;
/** A retry's lease outlives one attempt by this much. */
const LEASE_SLACK_MS = 5_000;
const RETRIES_CLAIMED = 64;
/**
 * Outcomes saved together: a batch waits up to this long (or until this many) while attempts are still out, so
 * that a busy worker commits about once per 10 ms rather than once per few deliveries (a commit is a WAL flush on
 * PostgreSQL). An idle one saves at once. Fewer than UNSAVED_MAX, which would otherwise hold an endpoint's starts.
 */
const OUTCOMES_BATCHED = READ_AHEAD;
const OUTCOMES_WAIT_MS = 10;

export interface WorkerOptions {
  /** How often due retries are looked for (new events are looked for as soon as they are written). */
  readonly pollMs?: number;
  /** The resolver used at connect time (tests stub DNS). */
  readonly lookup?: LookupFunction;
  /** Requests served so far: deliveries slow to a trickle while requests saturate the process. */
  readonly requests?: () => number;
  /** Where failures go (logged, shown in /readyz); the worker carries on after each. */
  readonly health?: WorkerHealth;
}

const IGNORE: WorkerHealth = { ok: () => undefined, failed: () => undefined };
const NOTHING = () => undefined;

/** One attempt to make: a first try (from an endpoint's cursor) or a retry (from its delivery row). */
interface Job {
  readonly endpointId: string;
  readonly event: StoredEvent;
  readonly url: string;
  readonly body: string;
  readonly deliveryId?: number;
  readonly attempts: number;
}

/** An endpoint this process consumes: its place in the outbox and what it has read ahead. */
interface Feed {
  endpoint: WebhookEndpoint;
  /** `endpoint` is as stored: false from an API change until the next lease renewal re-reads it. */
  current: boolean;
  /** Highest seq read from the outbox. */
  scanned: number;
  /** The cursor as stored. */
  saved: number;
  readonly ready: Job[];
  /** Seqs of first tries in flight: the cursor stays below them until they are recorded. */
  readonly inFlight: Set<number>;
  reading: boolean;
  /** The last read filled a page: there may be more. */
  more: boolean;
  /** When this process's lease on the endpoint runs out (ms). */
  leaseUntil: number;
}

/** An attempt's outcome on its way to the store, with the endpoint changes it makes. */
interface Outcome {
  readonly record: AttemptRecord;
  /** The feed of a first try: its cursor moves in the same transaction. */
  readonly feed?: Feed;
  readonly changes: ReadonlyArray<Parameters<WebhookStore['updateEndpoint']>>;
}

/** Everything up to here has been sent, given up on, or queued for retry in a committed row. */
const lowWater = (feed: Feed): number => {
  let low = feed.ready.length ? (feed.ready[0] as Job).event.seq - 1 : feed.scanned;
  for (const seq of feed.inFlight) low = Math.min(low, seq - 1);
  return low;
};

/**
 * Delivers events to webhook endpoints and callbacks, at least once. Nothing is queued on the write path:
 * each endpoint keeps a cursor into the outbox, and this worker (holding a lease on the endpoint, so two
 * processes never read one cursor) reads ahead from it, sends each event the endpoint may receive, and moves
 * the cursor only past events whose outcome is committed: delivered, given up, or a retry row with its due
 * time. A crash re-sends what was sent but not yet recorded, under the same `webhook-id`.
 *
 * Every attempt is signed the Standard Webhooks way with a fresh timestamp; 2xx delivers; 410 disables the
 * endpoint; anything else retries on the schedule (±10% jitter, later if Retry-After asks for it); an
 * endpoint whose attempts all failed for `disableAfter` (default 5 days) is disabled, and its owner sees why.
 */
export const startWebhookWorker = (ctx: RuntimeContext, options: WorkerOptions = {}) => {
  const { retryMs: schedule, timeoutMs, disableAfterMs, allowPrivateTargets } = ctx.plan.events.delivery;
  const poster = createPoster({
    timeoutMs,
    allowPrivate: allowPrivateTargets,
    ...(options.lookup ? { lookup: options.lookup } : {}),
  });
  const payloadOf = createPayloads(ctx);
  const signature = createSigner();
  const owner = `worker-${randomUUID()}`;
  /** The async context the worker started in (no caller's transaction). */
  const home = new AsyncResource('ninefold-webhook-worker');
  const feeds = new Map<string, Feed>();
  const retries = new Map<string, Job[]>();
  const running = new Map<string, number>();
  const held = new Set<number>();
  let stopped = false;
  const pace = createDeliveryPace(options.requests ?? (() => 0), () => pumpAll());

  const reported = options.health ?? IGNORE;
  /** Failures so far: a poll that saw none reports the worker healthy. */
  let failures = 0;
  const health: WorkerHealth = {
    ok: () => reported.ok(),
    failed(error, doing) {
      failures++;
      if (!stopped) reported.failed(error, doing);
    },
  };
  const transaction = (fn: () => Promise<unknown>, doing: string) =>
    ctx.store.transaction(fn).catch((error) => health.failed(error, doing));

  const outcomeOf = createOutcomeRule({ schedule, disableAfterMs, now: ctx.now });

  /**
   * Queues an attempt's outcome for the next batch; `saved` is called once that batch is saved (or failed). A first
   * try stays in its feed's inFlight until then: no cursor passes it before its outcome.
   */
  const record = (
    job: Job,
    endpoint: WebhookEndpoint | undefined,
    log: DeliveryAttempt,
    startedMs: number,
    answer: Answer | undefined,
    saved: () => void,
  ) => {
    const { next, failingSince, disable } = outcomeOf(job.attempts, endpoint, log, startedMs, answer);
    const live = endpoint?.kind === 'webhook' && !endpoint.disabledAt ? endpoint : undefined;
    const feed = job.deliveryId === undefined ? feeds.get(job.endpointId) : undefined;
    const changes: Array<Parameters<WebhookStore['updateEndpoint']>> = [];
    if (live && (live.failingSince ?? undefined) !== failingSince) changes.push([live.id, { failingSince }]);
    if (disable && live) changes.push([live.id, { disabledAt: log.at, disabledReason: disable }]);
    const record: AttemptRecord = {
      ...(job.deliveryId !== undefined ? { deliveryId: job.deliveryId } : {}),
      endpointId: job.endpointId,
      eventId: job.event.id,
      eventSeq: job.event.seq,
      ...(endpoint?.kind === 'callback' ? { url: job.url } : {}),
      attempt: log,
      next,
    };
    // Once saved, what this process holds of the endpoint follows what it changed.
    const followed = () => {
      const own = feeds.get(job.endpointId);
      if (own) {
        const { failingSince: _, ...rest } = own.endpoint;
        own.endpoint = {
          ...rest,
          ...(failingSince ? { failingSince } : {}),
          ...(disable ? { disabledAt: log.at, disabledReason: disable } : {}),
        };
      }
      saved();
    };
    outcomes.add({ record, ...(feed ? { feed } : {}), changes }, changes.length ? followed : saved);
  };

  /**
   * Saves the outcomes of a batch of attempts in one transaction: their rows in one go, the cursors they let move,
   * and the endpoint changes in the order they were made.
   */
  const saveOutcomes = async (batch: Outcome[]) => {
    for (const o of batch) o.feed?.inFlight.delete(o.record.eventSeq);
    await transaction(async () => {
      await ctx.store.webhooks.recordAttempts(batch.map((o) => o.record));
      for (const feed of new Set(batch.map((o) => o.feed))) if (feed) await saveCursor(feed);
      for (const o of batch) for (const change of o.changes) await ctx.store.webhooks.updateEndpoint(...change);
    }, 'recording an attempt');
  };
  const outcomes = createBatches(saveOutcomes, {
    max: OUTCOMES_BATCHED,
    waitMs: OUTCOMES_WAIT_MS,
    coming: () => unanswered > 0,
  });

  const saveCursor = async (feed: Feed) => {
    const low = lowWater(feed);
    if (low <= feed.saved) return;
    feed.saved = low;
    await ctx.store.webhooks.advanceCursor(feed.endpoint.id, owner, low);
  };

  /** Attempts started whose outcome is not saved yet (a shutdown waits for them), and who waits for none. */
  let unsaved = 0;
  /** Attempts sent whose receiver has not answered yet: their outcomes are on their way. */
  let unanswered = 0;
  let allSaved: (() => void) | undefined;

  /**
   * Starts an attempt: its endpoint slot is taken until the receiver answers (or the request fails); the attempt
   * counts as unsaved until its outcome is. Callbacks rather than promises on this path: it runs per delivery.
   */
  const start = (job: Job) => {
    running.set(job.endpointId, (running.get(job.endpointId) ?? 0) + 1);
    unsaved++;
    unanswered++;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      unanswered--;
      running.set(job.endpointId, (running.get(job.endpointId) ?? 1) - 1);
      pump(job.endpointId);
    };
    const finish = () => {
      if (job.deliveryId !== undefined) held.delete(job.deliveryId);
      if (--unsaved === 0) allSaved?.();
      if (released) pump(job.endpointId);
      else release();
    };
    const failed = (error: unknown) => {
      health.failed(error, 'delivering an event');
      finish();
    };
    // A first try uses the endpoint as its feed holds it (re-read at every lease renewal, at once when the API
    // changes it, and kept up to date by record()); a retry reads it afresh.
    const feed = job.deliveryId === undefined ? feeds.get(job.endpointId) : undefined;
    try {
      if (feed?.current) send(job, feed.endpoint, release, finish);
      else
        ctx.store.webhooks.getEndpoint(job.endpointId).then((endpoint) => {
          try {
            send(job, endpoint, release, finish);
          } catch (error) {
            failed(error);
          }
        }, failed);
    } catch (error) {
      failed(error);
    }
  };

  /** Signs and sends one attempt, then records its outcome (`release` at the answer, `finish` once it is saved). */
  const send = (job: Job, endpoint: WebhookEndpoint | undefined, release: () => void, finish: () => void) => {
    const startedMs = ctx.now().getTime();
    const at = new Date(startedMs).toISOString();
    if (!endpoint || endpoint.disabledAt) {
      // Given up: the endpoint was disabled or deleted meanwhile (a retry row says so; a first try leaves none).
      if (job.deliveryId !== undefined)
        return record(job, endpoint, { at, durationMs: 0, error: 'endpoint disabled' }, startedMs, undefined, finish);
      feeds.get(job.endpointId)?.inFlight.delete(job.event.seq);
      return finish();
    }
    const timestamp = Math.floor(startedMs / 1000);
    let signatures = signature(endpoint.secret, job.event.id, timestamp, job.body);
    if (endpoint.previousSecret && endpoint.previousUntil && Date.parse(endpoint.previousUntil) > startedMs)
      signatures += ` ${signature(endpoint.previousSecret, job.event.id, timestamp, job.body)}`;
    const started = performance.now();
    const headers = {
      'webhook-id': job.event.id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatures,
      'user-agent': 'ninefold-webhooks',
    };
    const answered = (answer: Answer) => {
      // Timed before the slot is freed: freeing it starts the endpoint's next attempt, whose start must not fall
      // inside this one's span in the delivery log (at most 8 at once per endpoint, as the log shows).
      const log: DeliveryAttempt = {
        at,
        durationMs: performance.now() - started,
        ...(answer.status !== undefined ? { status: answer.status } : {}),
        ...(answer.error ? { error: answer.error } : {}),
      };
      release();
      record(job, endpoint, log, startedMs, answer, finish);
    };
    poster
      .post(job.url, headers, job.body)
      .then(answered)
      .catch((error: unknown) => {
        health.failed(error, 'delivering an event');
        finish();
      });
  };

  /** Starts what may start for one endpoint: its due retries first, then what its cursor read ahead. */
  const pump = (endpointId: string) => {
    if (stopped) return;
    const queue = retries.get(endpointId);
    const feed = feeds.get(endpointId);
    while ((running.get(endpointId) ?? 0) < PER_ENDPOINT) {
      const next = queue?.length
        ? queue
        : feed?.ready.length && feed.inFlight.size < UNSAVED_MAX
          ? feed.ready
          : undefined;
      if (!next || !pace.take()) break;
      const job = next.shift() as Job;
      if (job.deliveryId === undefined) feed?.inFlight.add(job.event.seq);
      start(job);
    }
    if (queue?.length === 0) retries.delete(endpointId);
    if (feed?.more && feed.ready.length < READ_AHEAD / 2) void read(feed);
  };
  const pumpAll = () => {
    for (const id of new Set([...feeds.keys(), ...retries.keys()])) pump(id);
  };

  /** Reads the outbox past what this endpoint has seen, keeping what it may receive. */
  const read = async (feed: Feed) => {
    if (feed.reading || stopped || feed.ready.length >= READ_AHEAD) return;
    feed.reading = true;
    try {
      const types = feed.endpoint.events;
      const events = await ctx.store.events.after(feed.scanned, READ_AHEAD, types);
      for (const event of events) {
        feed.scanned = event.seq;
        const out = payloadOf(feed.endpoint, event);
        if (!out) continue;
        if ('problem' in out) {
          // Given up at once, recorded with the batch of attempts under way (in flight until then, as a first try).
          feed.inFlight.add(event.seq);
          const startedMs = ctx.now().getTime();
          const job: Job = { endpointId: feed.endpoint.id, event, url: '', body: '', attempts: 0 };
          const log = { at: new Date(startedMs).toISOString(), durationMs: 0, error: out.problem };
          record(job, feed.endpoint, log, startedMs, undefined, NOTHING);
          continue;
        }
        feed.ready.push({ endpointId: feed.endpoint.id, event, url: out.url, body: out.body, attempts: 0 });
      }
      feed.more = events.length === READ_AHEAD;
    } catch (error) {
      feed.more = false; // the next wake or poll reads again
      health.failed(error, 'reading the outbox');
    } finally {
      feed.reading = false;
    }
    if (feed.ready.length) pump(feed.endpoint.id);
    else if (feed.more) setImmediate(() => void read(feed)); // a page this endpoint skipped entirely
  };

  /** Takes (or keeps) the leases of live endpoints and follows changes to their settings. */
  const renew = async () => {
    // An API change while the leases are read makes what they read stale: it is not taken as current.
    const seenChanges = changes;
    const nowMs = ctx.now().getTime();
    let leased: WebhookEndpoint[] = [];
    await transaction(async () => {
      leased = await ctx.store.webhooks.leaseEndpoints(
        owner,
        new Date(nowMs).toISOString(),
        new Date(nowMs + LEASE_MS).toISOString(),
      );
    }, 'leasing endpoints');
    const live = new Set<string>();
    for (const endpoint of leased) {
      live.add(endpoint.id);
      const feed = feeds.get(endpoint.id);
      if (!feed || endpoint.cursor > feed.saved) {
        // New to this process, or moved on by hand (re-enabled: it resumes from then).
        feeds.set(endpoint.id, {
          endpoint,
          current: seenChanges === changes,
          scanned: endpoint.cursor,
          saved: endpoint.cursor,
          ready: [],
          inFlight: feed?.inFlight ?? new Set(),
          reading: false,
          more: true,
          leaseUntil: nowMs + LEASE_MS,
        });
      } else {
        feed.endpoint = endpoint;
        feed.current = seenChanges === changes;
        feed.leaseUntil = nowMs + LEASE_MS;
      }
    }
    // A live endpoint this process holds is skipped while a transaction of its own (saving a cursor) has its row
    // locked: its feed is kept until the lease runs out (no other process takes it before), or it was seen disabled.
    // Dropped and made again, the feed would re-send everything past the stored cursor.
    for (const [id, feed] of feeds) {
      if (!live.has(id) && (feed.leaseUntil <= nowMs || feed.endpoint.disabledAt)) feeds.delete(id);
    }
  };

  const claimRetries = async () => {
    let claimed: Awaited<ReturnType<typeof ctx.store.webhooks.claimDue>> = [];
    await transaction(async () => {
      claimed = await ctx.store.webhooks.claimDue(ctx.now(), owner, timeoutMs + LEASE_SLACK_MS, RETRIES_CLAIMED);
    }, 'claiming due retries');
    for (const delivery of claimed) {
      if (held.has(delivery.id)) continue;
      const event = await ctx.store.events.get(delivery.eventId);
      const endpoint = await ctx.store.webhooks.getEndpoint(delivery.endpointId);
      const out = event && endpoint ? payloadOf(endpoint, event) : undefined;
      const job: Job = {
        endpointId: delivery.endpointId,
        event: event ?? { seq: delivery.eventSeq, id: delivery.eventId, type: '', time: '', data: {} },
        url: delivery.url ?? endpoint?.url ?? '',
        body: out && !('problem' in out) ? out.body : '',
        deliveryId: delivery.id,
        attempts: delivery.attempts,
      };
      if (!out || 'problem' in out) {
        // Nothing left to send: the event, the endpoint or the owner's right to read the record is gone.
        const error = out && 'problem' in out ? out.problem : 'no longer deliverable';
        const startedMs = ctx.now().getTime();
        record(
          job,
          endpoint,
          { at: new Date(startedMs).toISOString(), durationMs: 0, error },
          startedMs,
          undefined,
          NOTHING,
        );
        continue;
      }
      held.add(delivery.id);
      const queue = retries.get(job.endpointId) ?? [];
      queue.push(job);
      retries.set(job.endpointId, queue);
    }
    pumpAll();
  };

  let lastRenew = 0;
  /** API changes to endpoints so far (see refresh). */
  let changes = 0;
  let timer: NodeJS.Timeout | undefined;
  const pollMs = options.pollMs ?? 250;
  const poll = async () => {
    timer = undefined;
    if (stopped) return;
    const before = failures;
    try {
      if (Date.now() - lastRenew >= RENEW_MS) {
        lastRenew = Date.now();
        await renew();
        await transaction(async () => {
          for (const feed of feeds.values()) await saveCursor(feed);
        }, 'saving cursors');
      }
      await claimRetries();
      if (failures === before) health.ok();
    } catch (error) {
      // A read outside the transactions above failed: log it, and keep polling.
      health.failed(error, 'polling for work');
    }
    for (const feed of feeds.values()) void read(feed);
    if (!stopped) timer = setTimeout(() => void poll(), pollMs);
  };
  let waking: NodeJS.Timeout | undefined;
  /** New events were written: read them once they are committed (the end of this turn of the event loop). */
  const wake = () => {
    if (stopped || waking) return;
    // In the worker's own async context, not the writer's: a store transaction the read leads to is not the writer's.
    waking = home.runInAsyncScope(() =>
      setTimeout(() => {
        waking = undefined;
        for (const feed of feeds.values()) void read(feed);
      }, 2),
    );
  };
  timer = setTimeout(() => void poll(), 0);
  return {
    wake,
    /** Endpoints were added or changed: take them up now rather than at the next lease renewal. */
    refresh() {
      changes++;
      lastRenew = 0;
      for (const feed of feeds.values()) feed.current = false;
      if (stopped || !timer) return;
      clearTimeout(timer);
      timer = home.runInAsyncScope(() => setTimeout(() => void poll(), 0));
    },
    /** Ends the attempts in flight (their connections destroyed): each is recorded as failed, and retried later. */
    cut() {
      poster.cut();
    },
    async stop() {
      stopped = true;
      pace.stop();
      if (timer) clearTimeout(timer);
      if (waking) clearTimeout(waking);
      if (unsaved > 0) await new Promise<void>((done) => (allSaved = done));
      await transaction(async () => {
        for (const feed of feeds.values()) await saveCursor(feed);
        await ctx.store.webhooks.releaseEndpoints(owner);
      }, 'releasing endpoints');
      poster.close();
    },
  };
};
