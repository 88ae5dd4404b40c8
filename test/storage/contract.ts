import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FilterOp, Row, Store } from '../../src/storage/index.ts';
import { StoreError } from '../../src/storage/index.ts';
import type { Backend } from './backend.ts';
import { faultContract } from './fault-contract.ts';
import { migrationContract } from './migration-contract.ts';
import { outboxContract } from './outbox-contract.ts';
import { planOfSpec } from './plan.ts';
import { workerContract } from './worker-contract.ts';

const SPEC = `
ninefold: 1
service: { name: contract }
resources:
  Item:
    fields:
      name: { type: string, required: true, unique: true }
      rank: { type: integer }
      price: { type: number }
      active: { type: boolean }
      tags: { type: array, items: { type: string } }
      meta: { type: json }
      cost: { type: decimal, scale: 2 }
endpoints:
  Item: { list: { filter: [name, rank, active, tags, price, cost], sort: [name, rank, price, cost] } }
`;

export const contractPlan = () => planOfSpec(SPEC);

export const tempDir = () => mkdtempSync(join(tmpdir(), 'ninefold-store-'));

let seq = 0;
const row = (name: string, extra: Partial<Row> = {}): Row => {
  seq++;
  const at = new Date(Date.UTC(2026, 0, 1, 0, 0, seq)).toISOString();
  return {
    id: `01J${String(seq).padStart(23, '0')}`,
    createdAt: at,
    updatedAt: at,
    revision: 1,
    name,
    rank: null,
    price: null,
    active: null,
    tags: null,
    meta: null,
    cost: null,
    ...extra,
  };
};

/**
 * The contract every Store passes, on a real database. A second backend joins by adding one entry to the list in
 * storage-contract.test.ts.
 */
export const storeContract = (name: string, backend: Backend) => {
  describe(`Store contract: ${name}`, () => {
    let store: Store;
    const plan = contractPlan();
    beforeAll(async () => {
      store = backend.open(backend.create());
      await store.migrate(plan);
    });
    afterAll(async () => store.close());

    it('round-trips every value type exactly', async () => {
      const r = row('round-trip', {
        rank: 9007199254740991,
        price: 0.1,
        active: false,
        tags: ['a', 'é', '😀'],
        meta: { a: [1, { b: null }] },
      });
      await store.insert('Item', r);
      expect(await store.get('Item', r.id)).toEqual(r);
    });

    it('answers undefined for a missing id', async () => {
      expect(await store.get('Item', 'nope')).toBeUndefined();
    });

    it('refuses a duplicate unique value with a StoreError naming the field', async () => {
      await store.insert('Item', row('dup'));
      const error = await store.insert('Item', row('dup')).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreError);
      expect((error as StoreError).kind).toBe('unique');
      expect((error as StoreError).field).toBe('name');
    });

    it('updates only when the expectation holds, bumping the revision', async () => {
      const r = row('cas', { rank: 1 });
      await store.insert('Item', r);
      expect(await store.update('Item', r.id, { rank: 2 }, { revision: 7 })).toBeUndefined();
      expect(await store.update('Item', r.id, { rank: 2 }, { where: { rank: 5 } })).toBeUndefined();
      const after = await store.update('Item', r.id, { rank: 2 }, { revision: 1, where: { rank: 1 } });
      expect(after?.rank).toBe(2);
      expect(after?.revision).toBe(2);
    });

    it('rolls back every write of a failed transaction', async () => {
      const a = row('tx-a');
      await store
        .transaction(async () => {
          await store.insert('Item', a);
          await store.insert('Item', row('tx-a'));
        })
        .catch(() => undefined);
      expect(await store.get('Item', a.id)).toBeUndefined();
    });

    it('commits the writes of a transaction together, or none when one is a duplicate, naming its field', async () => {
      const [a, b] = [row('together-a'), row('together-b', { tags: ['x'], meta: { n: 1 } })];
      const before = await store.events.lastSeq();
      await store.transaction(async () => {
        await store.insert('Item', a);
        await store.insert('Item', b);
        await store.events.append({ type: 'Item.created', time: b.createdAt, recordId: b.id, data: { b: true } });
      });
      expect(await store.get('Item', a.id)).toEqual(a);
      expect(await store.get('Item', b.id)).toEqual(b);
      expect((await store.events.after(before, 10)).map((e) => e.data)).toEqual([{ b: true }]);

      const c = row('together-c');
      const error = await store
        .transaction(async () => {
          await store.insert('Item', c);
          await store.events.append({ type: 'Item.created', time: c.createdAt, recordId: c.id, data: { c: true } });
          await store.insert('Item', row('together-a'));
        })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreError);
      expect((error as StoreError).kind).toBe('unique');
      expect((error as StoreError).field).toBe('name');
      expect(await store.get('Item', c.id)).toBeUndefined();
      expect(await store.events.after(before + 1, 10)).toEqual([]);
    });

    it('undoes only the writes of a failed savepoint: the transaction goes on and commits the rest', async () => {
      const [before, retried, lost] = [row('sp-before'), row('sp-taken'), row('sp-lost')];
      await store.insert('Item', row('sp-taken'));
      await store.transaction(async () => {
        await store.insert('Item', before);
        const clash = await store
          .savepoint(async () => {
            await store.update('Item', before.id, { rank: 7 });
            await store.insert('Item', lost);
            await store.insert('Item', retried);
          })
          .catch((e: unknown) => e);
        expect(clash).toBeInstanceOf(StoreError);
        expect((clash as StoreError).field).toBe('name');
        await store.savepoint(() => store.insert('Item', { ...retried, name: 'sp-taken-2' }));
      });
      expect((await store.get('Item', before.id))?.rank).toBeNull();
      expect(await store.get('Item', lost.id)).toBeUndefined();
      expect((await store.get('Item', retried.id))?.name).toBe('sp-taken-2');
      // Outside a transaction a savepoint is the writes themselves.
      const alone = row('sp-alone');
      await store.savepoint(() => store.insert('Item', alone));
      expect(await store.get('Item', alone.id)).toEqual(alone);
    });

    it('lists with filters, sorts and keyset pages that visit every row once', async () => {
      for (let i = 0; i < 25; i++) {
        await store.insert(
          'Item',
          row(`page-${String(i).padStart(2, '0')}`, { rank: i % 5, active: i % 2 === 0, tags: [`t${i % 3}`] }),
        );
      }
      const seen: string[] = [];
      let after: unknown[] | undefined;
      const base = {
        filters: [{ field: 'name', op: 'prefix' as const, value: 'page-' }],
        sort: [{ field: 'rank', desc: true }],
        count: true,
      };
      for (;;) {
        const query = { ...base, limit: 4, ...(after ? { after } : {}) };
        const { rows, total } = await store.list('Item', query);
        expect(total).toBe(25);
        seen.push(...rows.map((r) => r.id));
        if (rows.length < 4) break;
        after = store.keysetOf('Item', query, rows.at(-1) as Row);
      }
      expect(new Set(seen).size).toBe(25);
      expect(seen.length).toBe(25);
      const inList = await store.list('Item', {
        filters: [{ field: 'rank', op: 'in', value: [0, 4] }],
        sort: [],
        limit: 100,
        count: false,
      });
      expect(inList.rows.every((r) => r.rank === 0 || r.rank === 4)).toBe(true);
      const tagged = await store.list('Item', {
        filters: [{ field: 'tags', op: 'contains', value: 't1' }],
        sort: [],
        limit: 100,
        count: false,
      });
      expect(tagged.rows.length).toBeGreaterThan(0);
      expect(tagged.rows.every((r) => (r.tags as string[]).includes('t1'))).toBe(true);
      const active = await store.list('Item', {
        filters: [
          { field: 'active', op: 'eq', value: true },
          { field: 'name', op: 'prefix', value: 'page-' },
        ],
        sort: [],
        limit: 100,
        count: false,
      });
      expect(active.rows.length).toBe(13);
    });

    it('compares and sorts decimals by value, not as text', async () => {
      for (const cost of ['9.50', '10.00', '100.25', '2.00']) await store.insert('Item', row(`cost-${cost}`, { cost }));
      const q = {
        filters: [{ field: 'cost', op: 'gte' as const, value: 9.5 }],
        sort: [{ field: 'cost', desc: false }],
        count: false,
      };
      const first = await store.list('Item', { ...q, limit: 2 });
      expect(first.rows.map((r) => r.cost)).toEqual(['9.50', '10.00']);
      const next = await store.list('Item', {
        ...q,
        limit: 2,
        after: store.keysetOf('Item', q as never, first.rows[1] as Row),
      });
      expect(next.rows.map((r) => r.cost)).toEqual(['100.25']);
    });

    it('treats LIKE wildcards in prefix filters as plain characters', async () => {
      await store.insert('Item', row('100%_off'));
      await store.insert('Item', row('100 percent'));
      const { rows } = await store.list('Item', {
        filters: [{ field: 'name', op: 'prefix', value: '100%' }],
        sort: [],
        limit: 10,
        count: false,
      });
      expect(rows.map((r) => r.name)).toEqual(['100%_off']);
    });

    it('compares strings exactly; the i-operators fold A–Z and nothing else', async () => {
      for (const name of ['Case-A', 'case-a', 'CASE-A', 'case-é', 'case-É', 'case*?[x]'])
        await store.insert('Item', row(name));
      const names = async (op: FilterOp, value: string) =>
        (
          await store.list('Item', {
            filters: [{ field: 'name', op, value }],
            sort: [{ field: 'name', desc: false }],
            limit: 100,
            count: false,
          })
        ).rows.map((r) => r.name);
      expect(await names('prefix', 'case-')).toEqual(['case-a', 'case-É', 'case-é']);
      expect(await names('contains', 'SE-')).toEqual(['CASE-A']);
      expect(await names('prefix', 'case*?[')).toEqual(['case*?[x]']);
      expect(await names('ieq', 'CASE-A')).toEqual(['CASE-A', 'Case-A', 'case-a']);
      expect(await names('iprefix', 'CASE-É')).toEqual(['case-É']);
      expect(await names('icontains', 'É')).toEqual(['case-É']);
    });

    it('claims an idempotency key per caller, once; a claim rolled back leaves the key free', async () => {
      const saved = { fingerprint: 'f', status: 201, headers: { etag: '"r1"' }, body: '{}' };
      const now = new Date();
      await store.transaction(async () => {
        expect(await store.idempotency.claim('alice', 'k1', now)).toEqual({ state: 'new' });
        // The same key again while the claim is held (in the same transaction here): running.
        expect(await store.idempotency.claim('alice', 'k1', now)).toEqual({ state: 'running' });
        await store.idempotency.complete('alice', 'k1', saved);
      });
      await store
        .transaction(async () => {
          expect(await store.idempotency.claim('alice', 'k1', now)).toEqual({ state: 'saved', response: saved });
          expect(await store.idempotency.claim('bob', 'k1', now)).toEqual({ state: 'new' });
          throw new Error('rolled back');
        })
        .catch(() => undefined);
      await store.transaction(async () => {
        expect(await store.idempotency.claim('bob', 'k1', now)).toEqual({ state: 'new' });
        await store.idempotency.complete('bob', 'k1', { ...saved, status: 200 });
      });
    });

    it('leases a due timer to one owner only', async () => {
      const due = new Date(Date.now() - 1000).toISOString();
      await store.stateLog.schedule({ resource: 'Item', recordId: 'x', transition: 't', fromState: 's', dueAt: due });
      const first = await store.stateLog.claimDue(new Date(), 'one', 30_000, 10);
      const second = await store.stateLog.claimDue(new Date(), 'two', 30_000, 10);
      expect(first.length).toBe(1);
      expect(second.length).toBe(0);
    });

    it('stores API keys: create, find, list, revoke once', async () => {
      const key = {
        id: 'key_contract000001',
        secretHash: 'ab'.repeat(32),
        subject: 'staff-1',
        roles: ['admin', 'support'],
        createdAt: '2026-01-01T00:00:00.000Z',
        expiresAt: '2027-01-01T00:00:00.000Z',
      };
      const bare = {
        id: 'key_contract000002',
        secretHash: 'cd'.repeat(32),
        subject: 'k2',
        roles: [],
        createdAt: key.createdAt,
      };
      await store.apiKeys.create(key);
      await store.apiKeys.create(bare);
      expect(await store.apiKeys.find(key.id)).toEqual(key);
      expect(await store.apiKeys.find(bare.id)).toEqual(bare);
      expect(await store.apiKeys.find('key_unknown')).toBeUndefined();
      expect((await store.apiKeys.list()).map((k) => k.id)).toEqual([key.id, bare.id]);

      const at = new Date('2026-02-01T00:00:00.000Z');
      const before = store.apiKeys.generation();
      expect(store.apiKeys.generation()).toBe(before);
      expect(await store.apiKeys.revoke(key.id, at)).toBe(true);
      expect(store.apiKeys.generation()).not.toBe(before);
      expect(await store.apiKeys.revoke(key.id, new Date())).toBe(false);
      expect(await store.apiKeys.revoke('key_unknown', at)).toBe(false);
      // A revoked key is still found: the caller decides what revoked means.
      expect(await store.apiKeys.find(key.id)).toEqual({ ...key, revokedAt: at.toISOString() });
      expect((await store.apiKeys.list()).find((k) => k.id === bare.id)?.revokedAt).toBeUndefined();
    });

    it('keeps an event exactly when its transaction commits, among many committed together', async () => {
      const before = await store.events.lastSeq();
      // 75 transactions started at once (a store may commit them together); every third fails after its append.
      const outcomes = await Promise.allSettled(
        Array.from({ length: 75 }, (_, i) =>
          store.transaction(async () => {
            const r = row(`outbox-${i}`);
            await store.insert('Item', r);
            await store.events.append({
              type: 'Item.created',
              time: r.createdAt,
              resource: 'Item',
              recordId: r.id,
              data: { i },
            });
            if (i % 3 === 2) throw new Error('changed my mind');
          }),
        ),
      );
      expect(outcomes.map((o) => o.status)).toEqual(
        Array.from({ length: 75 }, (_, i) => (i % 3 === 2 ? 'rejected' : 'fulfilled')),
      );
      const events = await store.events.after(before, 1000);
      const committed = Array.from({ length: 75 }, (_, i) => i).filter((i) => i % 3 !== 2);
      expect(events.map((e) => e.data.i).sort((a, b) => Number(a) - Number(b))).toEqual(committed);
      for (const e of events) expect(await store.get('Item', e.recordId as string)).toBeDefined();
      // Outside a transaction an append is written at once.
      await store.events.append({ type: 'Item.note', time: new Date().toISOString(), data: { alone: true } });
      expect((await store.events.after(events.at(-1)?.seq ?? before, 10)).map((e) => e.data)).toEqual([
        { alone: true },
      ]);
    });

    it('keeps writes made outside any transaction while another transaction waits, then rolls back', async () => {
      const before = await store.events.lastSeq();
      let waiting!: () => void;
      const suspended = new Promise<void>((resolve) => {
        waiting = resolve;
      });
      const failing = store.transaction(async () => {
        await store.events.append({ type: 'Item.doomed', time: new Date().toISOString(), data: {} });
        waiting();
        await new Promise((resolve) => setTimeout(resolve, 20)); // suspended mid-transaction
        throw new Error('changed my mind');
      });
      const failed = failing.catch((error: unknown) => error);
      await suspended;
      // Writes of every kind, none in a transaction, all made while the other one is suspended: each must stay.
      const bystander = row('bystander');
      const key = {
        id: 'key_bystander',
        secretHash: 'x',
        subject: 'b',
        roles: [],
        createdAt: new Date().toISOString(),
      };
      await Promise.all([
        store.events.append({ type: 'Item.bystander', time: new Date().toISOString(), data: {} }),
        store.insert('Item', bystander),
        store.apiKeys.create(key),
      ]);
      expect(((await failed) as Error).message).toBe('changed my mind');
      expect((await store.events.after(before, 10)).map((e) => e.type)).toEqual(['Item.bystander']);
      expect(await store.get('Item', bystander.id)).toBeDefined();
      expect(await store.apiKeys.find(key.id)).toBeDefined();
    });

    it('deletes', async () => {
      const r = row('gone');
      await store.insert('Item', r);
      expect(await store.delete('Item', r.id)).toBe(true);
      expect(await store.delete('Item', r.id)).toBe(false);
      expect(await store.exists('Item', 'name', 'gone')).toBe(false);
    });
  });
  faultContract(name, backend);
  migrationContract(name, backend);
  outboxContract(name, backend);
  workerContract(name, backend);
};
