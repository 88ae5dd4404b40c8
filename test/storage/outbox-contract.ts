import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewEvent, Store, StoredEvent } from '../../src/storage/index.ts';
import { awaiting, waitFor } from '../helpers/wait-for.ts';
import type { Backend } from './backend.ts';
import { planOfSpec } from './plan.ts';

const SPEC = `
ninefold: 1
service: { name: outbox }
resources:
  Note:
    fields: { title: { type: string, required: true } }
`;

const event = (type: string, data: Record<string, unknown> = {}): NewEvent => ({
  type,
  time: new Date().toISOString(),
  data,
});

/** Resolves once `open` is called: a step another transaction waits for. */
const gate = () => {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
};

/**
 * The outbox and what crosses instances: commit order, reads by id and type, and a second store on the same database
 * (another process or instance) seeing claims, keys and events of the first.
 */
export const outboxContract = (name: string, backend: Backend) => {
  describe(`Store contract: ${name}, outbox and instances`, () => {
    let database: string;
    let one: Store;
    let two: Store;
    beforeAll(async () => {
      database = backend.create();
      one = backend.open(database);
      await one.migrate(planOfSpec(SPEC));
      two = backend.open(database);
      await two.migrate(planOfSpec(SPEC));
    });
    afterAll(async () => {
      await one.close();
      await two.close();
    });

    it('numbers events in commit order: a transaction that appended first but commits last is read after', async () => {
      const before = await one.events.lastSeq();
      const appended = gate();
      const release = gate();
      const early = one.transaction(async () => {
        await one.events.append(event('Note.early'));
        appended.open();
        await release.opened;
      });
      await awaiting(appended.opened, 'the early transaction to append');
      // Where writers run side by side, the late transaction (on another instance) commits while the early one is
      // open; SQLite's one writer makes it wait for the early one instead (on the same store: a second connection
      // would wait for the file's lock with the event loop blocked).
      const writer = backend.concurrentWriters ? two : one;
      const late = writer.transaction(async () => {
        await writer.events.append(event('Note.late'));
      });
      if (backend.concurrentWriters) await awaiting(late, 'the late transaction to commit');
      const firstRead = await two.events.after(before, 10);
      release.open();
      await early;
      await late;
      const secondRead = await two.events.after(firstRead.at(-1)?.seq ?? before, 10);
      const read = [...firstRead, ...secondRead];
      expect(read.map((e) => e.type).sort()).toEqual(['Note.early', 'Note.late']);
      expect(read.map((e) => e.seq)).toEqual([...read.map((e) => e.seq)].sort((a, b) => a - b));
      if (backend.concurrentWriters) expect(firstRead.map((e) => e.type)).toEqual(['Note.late']);
    });

    it('reads events by id, and after a seq by type', async () => {
      const before = await one.events.lastSeq();
      await one.transaction(async () => {
        await one.events.append(event('Note.created', { n: 1 }));
        await one.events.append(event('Note.deleted', { n: 2 }));
        await one.events.append(event('Note.created', { n: 3 }));
      });
      const all = await two.events.after(before, 10);
      expect(all.map((e) => e.data.n)).toEqual([1, 2, 3]);
      const created = await two.events.after(before, 10, ['Note.created']);
      expect(created.map((e) => e.data.n)).toEqual([1, 3]);
      expect((await two.events.after(before, 1, ['Note.deleted'])).map((e) => e.data.n)).toEqual([2]);
      const second = all[1] as StoredEvent;
      expect(await two.events.get(second.id)).toEqual(second);
      expect(await two.events.get('evt_nope')).toBeUndefined();
      // The seq of a real event with another time: no such event.
      const otherTime = `${second.id.slice(0, 4)}${'0'.repeat(10)}${second.id.slice(14)}`;
      expect(await two.events.get(otherTime)).toBeUndefined();
      expect(await two.events.lastSeq()).toBe(all.at(-1)?.seq);
    });

    it('tells a second instance of events, keys and endpoints written through the first', async () => {
      if (!backend.sharedSignals) return;
      const told = new Set<string>();
      const stops = (['events', 'keys', 'endpoints'] as const).map((channel) =>
        two.signals.subscribe(channel, () => told.add(channel)),
      );
      await one.events.append(event('Note.signal'));
      await one.apiKeys.create({
        id: 'key_signal',
        secretHash: 'x',
        subject: 's',
        roles: [],
        createdAt: new Date().toISOString(),
      });
      await one.webhooks.createEndpoint({
        id: 'whe_signal',
        kind: 'webhook',
        url: 'https://example.com/hook',
        events: [],
        secret: 'whsec_x',
        ownerSubject: 's',
        ownerRoles: [],
        createdAt: new Date().toISOString(),
        cursor: 0,
      });
      await waitFor(
        () => told.size === 3,
        () => `signals on the second instance, got ${[...told]}`,
      );
      for (const stop of stops) stop();
    });

    it('a key revoked through one instance changes the key generation of the other', async () => {
      await one.apiKeys.create({
        id: 'key_revoked_elsewhere',
        secretHash: 'x',
        subject: 's',
        roles: [],
        createdAt: new Date().toISOString(),
      });
      expect(await two.apiKeys.find('key_revoked_elsewhere')).toBeDefined();
      const before = two.apiKeys.generation();
      expect(await one.apiKeys.revoke('key_revoked_elsewhere', new Date())).toBe(true);
      await waitFor(() => two.apiKeys.generation() !== before, 'the second instance to see the revocation');
      expect((await two.apiKeys.find('key_revoked_elsewhere'))?.revokedAt).toBeDefined();
    });

    it('a key written through one instance is seen by another before it trusts its memory, with no notification', async () => {
      // A third instance that never hears a notification: what it knows of key changes it must find out itself.
      const deaf = backend.open(database);
      await deaf.migrate(planOfSpec(SPEC));
      await (deaf.signals as { stop?: () => Promise<void> }).stop?.();
      // What a request sent now would see: a new turn of the event loop, then the store's settle step (if any).
      const look = async () => {
        await new Promise((resolve) => setImmediate(resolve));
        await deaf.apiKeys.settle?.();
        return deaf.apiKeys.generation();
      };
      try {
        const first = await look();
        expect(await look()).toBe(first);
        await one.apiKeys.create({
          id: 'key_unheard',
          secretHash: 'x',
          subject: 's',
          roles: [],
          createdAt: new Date().toISOString(),
        });
        const created = await look();
        expect(created).not.toBe(first);
        expect(await look()).toBe(created);
        expect(await one.apiKeys.revoke('key_unheard', new Date())).toBe(true);
        expect(await look()).not.toBe(created);
      } finally {
        await deaf.close();
      }
    });

    it('an idempotency key claimed in an open transaction of one instance is running for the other', async () => {
      if (!backend.concurrentWriters) return;
      const claimed = gate();
      const release = gate();
      const now = new Date();
      const first = one.transaction(async () => {
        expect(await one.idempotency.claim('carol', 'k-shared', now)).toEqual({ state: 'new' });
        claimed.open();
        await release.opened;
        await one.idempotency.complete('carol', 'k-shared', { fingerprint: 'f', status: 201, headers: {}, body: '{}' });
      });
      await awaiting(claimed.opened, 'the first claim');
      expect(await two.transaction(() => two.idempotency.claim('carol', 'k-shared', now))).toEqual({
        state: 'running',
      });
      release.open();
      await first;
      const again = await two.transaction(() => two.idempotency.claim('carol', 'k-shared', now));
      expect(again.state).toBe('saved');
    });
  });
};
