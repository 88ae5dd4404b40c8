import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store, WebhookEndpoint } from '../../src/storage/index.ts';
import type { Backend } from './backend.ts';
import { planOfSpec } from './plan.ts';

const SPEC = `
ninefold: 1
service: { name: workers }
resources:
  Note:
    fields: { title: { type: string, required: true } }
`;

const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms);
const iso = (ms: number) => at(ms).toISOString();

let endpoints = 0;
const endpoint = (extra: Partial<WebhookEndpoint> = {}): WebhookEndpoint => ({
  id: `whe_${String(++endpoints).padStart(4, '0')}`,
  kind: 'webhook',
  url: 'https://example.com/hook',
  events: ['Note.created'],
  secret: 'whsec_one',
  ownerSubject: 'owner-a',
  ownerRoles: ['admin'],
  createdAt: iso(endpoints),
  cursor: 0,
  ...extra,
});

/** What the workers rely on: transition history, timers, webhook endpoints with their leases, and deliveries. */
export const workerContract = (name: string, backend: Backend) => {
  describe(`Store contract: ${name}, history, timers, webhooks`, () => {
    let one: Store;
    let two: Store;
    beforeAll(async () => {
      const database = backend.create();
      one = backend.open(database);
      await one.migrate(planOfSpec(SPEC));
      two = backend.open(database);
      await two.migrate(planOfSpec(SPEC));
    });
    afterAll(async () => {
      await one.close();
      await two.close();
    });

    it('keeps the transition history of each record, oldest first, inputs as written', async () => {
      const entry = {
        transition: 'place',
        from: 'cart',
        to: 'placed',
        at: iso(1),
        input: { ref: 'x', n: [1] },
        actor: 'u1',
      };
      await one.stateLog.append('Note', 'n1', entry);
      await one.stateLog.append('Note', 'n1', {
        ...entry,
        transition: 'ship',
        from: 'placed',
        to: 'shipped',
        input: null,
        actor: 'system',
      });
      await one.stateLog.append('Note', 'n2', { ...entry, actor: '' });
      const history = await two.stateLog.history('Note', 'n1');
      expect(history).toEqual([
        entry,
        { ...entry, transition: 'ship', from: 'placed', to: 'shipped', input: null, actor: 'system' },
      ]);
      expect(await two.stateLog.history('Note', 'none')).toEqual([]);
    });

    it('schedules timers, leases the due ones once, and lets a lapsed lease be taken over', async () => {
      const timer = { resource: 'Note', transition: 'expire', fromState: 'placed' };
      await one.stateLog.schedule({ ...timer, recordId: 't-late', dueAt: iso(60_000) });
      await one.stateLog.schedule({ ...timer, recordId: 't-due', dueAt: iso(1_000) });
      await one.stateLog.schedule({ ...timer, recordId: 't-cancelled', dueAt: iso(2_000) });
      expect((await two.stateLog.nextDue())?.toISOString()).toBe(iso(1_000));
      await one.stateLog.cancel('Note', 't-cancelled');

      const [claimed, ...others] = await one.stateLog.claimDue(at(5_000), 'one', 10_000, 10);
      expect(others).toEqual([]);
      expect(claimed).toMatchObject({ ...timer, recordId: 't-due', dueAt: iso(1_000) });
      expect(await two.stateLog.claimDue(at(6_000), 'two', 10_000, 10)).toEqual([]);
      // The lease ran out (its owner died): another process takes the timer.
      const [taken] = await two.stateLog.claimDue(at(20_000), 'two', 10_000, 10);
      expect(taken?.id).toBe(claimed?.id);
      await two.stateLog.finish(taken?.id as number);
      expect(await one.stateLog.claimDue(at(40_000), 'one', 10_000, 10)).toEqual([]);
      expect((await one.stateLog.nextDue())?.toISOString()).toBe(iso(60_000));
      await one.stateLog.cancel('Note', 't-late');
      expect(await one.stateLog.nextDue()).toBeUndefined();
    });

    it('stores webhook endpoints: create, read, list by owner (no callbacks), update, delete', async () => {
      const e = endpoint({ description: 'orders', apiVersion: '2026-01-15' });
      await one.webhooks.createEndpoint(e);
      await one.webhooks.createEndpoint(endpoint({ kind: 'callback', events: [] }));
      await one.webhooks.createEndpoint(endpoint({ ownerSubject: 'owner-b' }));
      expect(await two.webhooks.getEndpoint(e.id)).toEqual(e);
      expect((await two.webhooks.listEndpoints('owner-a')).map((x) => x.id)).toEqual([e.id]);
      await one.webhooks.updateEndpoint(e.id, {
        events: [],
        previousSecret: 'whsec_old',
        previousUntil: iso(9),
        disabledAt: iso(10),
        disabledReason: 'gone',
      });
      expect(await two.webhooks.getEndpoint(e.id)).toEqual({
        ...e,
        events: [],
        previousSecret: 'whsec_old',
        previousUntil: iso(9),
        disabledAt: iso(10),
        disabledReason: 'gone',
      });
      await one.webhooks.deleteEndpoint(e.id);
      expect(await two.webhooks.getEndpoint(e.id)).toBeUndefined();
      // The runtime owns callbacks as "\0callbacks", a subject no caller can have: stored and found as it is.
      const odd = endpoint({ ownerSubject: '\u0000callbacks\\0' });
      await one.webhooks.createEndpoint(odd);
      expect(await two.webhooks.getEndpoint(odd.id)).toEqual(odd);
      expect(await two.webhooks.listEndpoints(odd.ownerSubject)).toEqual([odd]);
      expect(await two.webhooks.listEndpoints('\u0000callbacks')).toEqual([]);
    });

    it('leases live endpoints to one owner until the lease runs out; cursors move forward for the holder only', async () => {
      const mine = endpoint({ ownerSubject: 'lease-owner' });
      await one.webhooks.createEndpoint(mine);
      await one.webhooks.createEndpoint(endpoint({ ownerSubject: 'lease-owner', disabledAt: iso(1) }));
      const leasedByOne = (await one.webhooks.leaseEndpoints('one', iso(1_000), iso(31_000))).map((x) => x.id);
      expect(leasedByOne).toContain(mine.id);
      expect((await two.webhooks.leaseEndpoints('two', iso(2_000), iso(32_000))).map((x) => x.id)).not.toContain(
        mine.id,
      );
      // The holder renews; the other instance still gets nothing of it.
      expect((await one.webhooks.leaseEndpoints('one', iso(3_000), iso(33_000))).map((x) => x.id)).toContain(mine.id);

      await two.webhooks.advanceCursor(mine.id, 'two', 5);
      expect((await one.webhooks.getEndpoint(mine.id))?.cursor).toBe(0);
      await one.webhooks.advanceCursor(mine.id, 'one', 7);
      await one.webhooks.advanceCursor(mine.id, 'one', 3);
      expect((await one.webhooks.getEndpoint(mine.id))?.cursor).toBe(7);
      await two.webhooks.moveCursor(mine.id, 2);
      expect((await one.webhooks.getEndpoint(mine.id))?.cursor).toBe(2);

      // The lease ran out: the other instance takes the endpoint over.
      expect((await two.webhooks.leaseEndpoints('two', iso(40_000), iso(70_000))).map((x) => x.id)).toContain(mine.id);
      await two.webhooks.releaseEndpoints('two');
      expect((await one.webhooks.leaseEndpoints('one', iso(41_000), iso(71_000))).map((x) => x.id)).toContain(mine.id);
      await one.webhooks.releaseEndpoints('one');
    });

    it('records attempts, leases due retries to one instance, lists deliveries with their attempts', async () => {
      const e = endpoint({ ownerSubject: 'deliveries' });
      await one.webhooks.createEndpoint(e);
      const first = { endpointId: e.id, eventId: 'evt_1', eventSeq: 1 };
      /** The deliveries' ids, in the order they were made. */
      const ids = async () => (await one.webhooks.listDeliveries(e.id, 10)).map((d) => d.id).reverse();
      // A batch: its deliveries are made in the order of the records.
      await one.webhooks.recordAttempts([
        {
          ...first,
          attempt: { at: iso(0), status: 500, durationMs: 12.4 },
          next: { state: 'pending', at: iso(5_000) },
        },
        {
          endpointId: e.id,
          eventId: 'evt_2',
          eventSeq: 2,
          url: 'https://example.com/callback',
          attempt: { at: iso(1), durationMs: 3, error: 'connection refused' },
          next: { state: 'pending', at: iso(60_000) },
        },
      ]);
      const [id, other] = (await ids()) as [number, number];
      expect(await one.webhooks.getDelivery(id)).toMatchObject({ eventId: 'evt_1', eventSeq: 1 });
      expect(await one.webhooks.getDelivery(other)).toMatchObject({ eventId: 'evt_2', eventSeq: 2 });
      expect(await two.webhooks.claimDue(at(4_000), 'two', 30_000, 10)).toEqual([]);
      const [claimed, ...rest] = await two.webhooks.claimDue(at(6_000), 'two', 30_000, 10);
      expect(rest).toEqual([]);
      expect(claimed).toMatchObject({ id, ...first, state: 'pending', attempts: 1, nextAt: iso(5_000) });
      expect(await one.webhooks.claimDue(at(7_000), 'one', 30_000, 10)).toEqual([]);

      // A retry and a first try in one batch.
      await two.webhooks.recordAttempts([
        {
          ...first,
          deliveryId: id,
          attempt: { at: iso(8_000), status: 200, durationMs: 5 },
          next: { state: 'delivered' },
        },
        {
          endpointId: e.id,
          eventId: 'evt_3',
          eventSeq: 3,
          attempt: { at: iso(8_001), status: 410, durationMs: 2 },
          next: { state: 'failed' },
        },
      ]);
      const [again, , third] = (await ids()) as [number, number, number];
      expect(again).toBe(id);
      expect(await one.webhooks.getDelivery(third)).toMatchObject({
        eventId: 'evt_3',
        state: 'failed',
        attempts: 1,
      });
      expect(await one.webhooks.getDelivery(id)).toMatchObject({ state: 'delivered', attempts: 2 });
      expect(await one.webhooks.getDelivery(other)).toMatchObject({ url: 'https://example.com/callback' });
      const listed = await one.webhooks.listDeliveries(e.id, 10);
      expect(listed.map((d) => d.id)).toEqual([third, other, id]);
      expect(listed[2]?.log).toEqual([
        { at: iso(0), status: 500, durationMs: 12 },
        { at: iso(8_000), status: 200, durationMs: 5 },
      ]);
      expect(listed[1]?.log).toEqual([{ at: iso(1), durationMs: 3, error: 'connection refused' }]);
      expect(listed[0]?.log).toEqual([{ at: iso(8_001), status: 410, durationMs: 2 }]);

      await one.webhooks.retry(id, iso(9_000));
      expect(await one.webhooks.getDelivery(id)).toMatchObject({ state: 'pending', nextAt: iso(9_000) });
      // Deleting the endpoint gives up its pending deliveries.
      await one.webhooks.deleteEndpoint(e.id);
      expect((await one.webhooks.getDelivery(other))?.state).toBe('failed');
    });

    it('counts hits in fixed windows, together across instances', async () => {
      const hits = await Promise.all(
        Array.from({ length: 10 }, (_, i) => (i % 2 ? one : two).counters.hit('login:x', at(1_000), 60_000)),
      );
      expect(hits.map((h) => h.count).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect(await one.counters.peek('login:x', at(30_000))).toEqual({ count: 10, resetAt: at(61_000).getTime() });
      expect(await two.counters.peek('login:y', at(30_000))).toBeUndefined();
      // The window ended: nothing runs, and the next hit starts a new one.
      expect(await two.counters.peek('login:x', at(61_000))).toBeUndefined();
      expect(await two.counters.hit('login:x', at(70_000), 60_000)).toEqual({
        count: 1,
        resetAt: at(130_000).getTime(),
      });
      await one.counters.hit('login:z', at(0), 1_000);
      expect(await one.counters.purgeBefore(at(120_000), 10)).toBe(1);
      expect(await one.counters.peek('login:x', at(80_000))).toEqual({ count: 1, resetAt: at(130_000).getTime() });
      // A reset by one instance ends the window for every instance.
      await one.counters.reset('login:x');
      expect(await two.counters.peek('login:x', at(80_000))).toBeUndefined();
    });

    it('due retries claimed by two instances at once go to one of them each', async () => {
      const e = endpoint({ ownerSubject: 'race' });
      await one.webhooks.createEndpoint(e);
      await one.webhooks.recordAttempts(
        Array.from({ length: 30 }, (_, i) => ({
          endpointId: e.id,
          eventId: `evt_race_${i}`,
          eventSeq: 100 + i,
          attempt: { at: iso(0), status: 503, durationMs: 1 },
          next: { state: 'pending', at: iso(1_000 + i) } as const,
        })),
      );
      const ids = (await one.webhooks.listDeliveries(e.id, 100)).map((d) => d.id);
      expect(ids).toHaveLength(30);
      const claims = await Promise.all(
        Array.from({ length: 6 }, (_, i) => (i % 2 ? one : two).webhooks.claimDue(at(100_000), `w${i}`, 30_000, 10)),
      );
      const claimed = claims.flat().map((d) => d.id);
      expect(new Set(claimed).size).toBe(claimed.length);
      expect([...claimed].sort((a, b) => a - b)).toEqual([...ids].sort((a, b) => a - b));
    });
  });
};
