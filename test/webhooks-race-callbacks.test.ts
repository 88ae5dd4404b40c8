import type { LookupFunction } from 'node:net';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../src/parts/auth/keys.ts';
import { newWebhookSecret } from '../src/parts/events/signing.ts';
import { call, planOf, type Served, servePlan } from './helpers/serve-spec.ts';
import { waitFor } from './helpers/wait-for.ts';
import { deliveriesOf, outcome, registerEndpoint, verifyHit } from './helpers/webhook-api.ts';
import { type Canary, receiverPool, startCanary } from './helpers/webhook-receiver.ts';

const pool = receiverPool();
const receiver = () => pool.receiver();
afterAll(() => pool.closeAll());
const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));
const typeOf = (body: string) => (JSON.parse(body) as { type: string }).type;

// RELIABILITY.md S4 with webhooks: 50 identical transitions at once on one record make one event, and each
// subscribed endpoint gets it once.
const RACE_SPEC = `
ninefold: 1
service: { name: hook-race }
resources:
  Request:
    idPrefix: req
    fields:
      title: { type: string, required: true }
    states:
      initial: pending
      final: [approved, rejected]
      transitions:
        approve: { from: pending, to: approved }
        reject: { from: pending, to: rejected }
events:
  auto: true
  webhooks: { retry: [100ms, 200ms], allowPrivateTargets: true }
endpoints:
  Request: { operations: [list, get, create], path: /requests }
`;

describe('the 50-way race', () => {
  let s: Served;
  beforeAll(async () => {
    s = await servePlan(planOf(RACE_SPEC), { webhookPollMs: 20 });
  });
  afterAll(() => s.close({ remove: true }));

  it('50 concurrent approve on one record: one 200, one outbox event, one delivery per subscribed endpoint', async () => {
    const [a, b] = [await receiver(), await receiver()];
    const epA = await registerEndpoint(s.url, {}, { url: a.url, events: ['Request.approved'] });
    const epB = await registerEndpoint(s.url, {}, { url: b.url, events: ['Request.approved', 'Request.rejected'] });
    const db = new Database(s.dbPath, { readonly: true, fileMustExist: true });
    try {
      const outbox = db.prepare('SELECT type FROM _ninefold_events WHERE record_id = ? ORDER BY seq').pluck();
      const ids: string[] = [];
      for (let round = 0; round < 3; round++) {
        const made = await call(s.url, 'POST', '/requests', { json: { title: `race ${round}` } });
        expect(made.status).toBe(201);
        const id = made.body.id as string;
        ids.push(id);
        const answers = await Promise.all(
          Array.from({ length: 50 }, () => call(s.url, 'POST', `/requests/${id}/approve`, { json: {} })),
        );
        expect(answers.filter((x) => x.status === 200)).toHaveLength(1);
        expect(answers.filter((x) => x.status === 409)).toHaveLength(49);
        expect(outbox.all(id)).toEqual(['Request.created', 'Request.approved']);
      }
      await waitFor(
        () => a.hits.length >= 3 && b.hits.length >= 3,
        () => `3 hits each; ${a.hits.length}, ${b.hits.length}`,
      );
      await sleep(400);
      for (const [r, ep] of [
        [a, epA],
        [b, epB],
      ] as const) {
        expect(r.hits.map((h) => typeOf(h.body))).toEqual(Array(3).fill('Request.approved'));
        const recordIds = r.hits.map((h) => JSON.parse(h.body).data.record.id).sort();
        expect(recordIds).toEqual([...ids].sort());
        for (const h of r.hits) verifyHit(ep.secret, h);
        const ds = await deliveriesOf(s.url, ep.id, {});
        expect(ds.map((d) => [d.state, d.attempts])).toEqual(Array(3).fill(['delivered', 1]));
        expect(new Set(ds.map((d) => d.eventId)).size).toBe(3);
      }
    } finally {
      db.close();
    }
  });
});

// Callbacks: each Order names its own receiver in a field; the configured events go there, signed.
const CALLBACK_SPEC = (allowPrivate: boolean) => `
ninefold: 1
service: { name: hook-callbacks }
resources:
  Order:
    fields:
      item: { type: string, required: true }
      owner: { type: string }
      callbackUrl: { type: string, format: uri }
      cost: { type: integer, readableBy: [admin] }
    states:
      initial: placed
      final: [shipped]
      transitions:
        ship: { from: placed, to: shipped }
auth:
  schemes: { key: { type: apiKey, in: header, name: X-Api-Key } }
  require: [key]
  roles: { member: Places orders., admin: Runs the shop. }
  rules:
    Order:
      owner: owner
      read: "record.owner == principal.subject || 'admin' in principal.roles"
      update: "record.owner == principal.subject || 'admin' in principal.roles"
events:
  auto: true
  webhooks: { retry: [100ms, 200ms], allowPrivateTargets: ${allowPrivate} }
  callbacks:
    Order: { field: callbackUrl, events: [Order.created, Order.updated, Order.shipped] }
endpoints:
  Order: { operations: [list, get, create, update] }
`;

const keys = async (s: Served) => ({
  member: { 'x-api-key': (await issueApiKey(s.store, { subject: 'mia', roles: ['member'] })).key },
  admin: { 'x-api-key': (await issueApiKey(s.store, { subject: 'ada', roles: ['admin'] })).key },
});

describe('callbacks', () => {
  it('callbacks: the configured events go to the record’s URL, signed with the secret the admin route shows, retried', async () => {
    const s = await servePlan(planOf(CALLBACK_SPEC(true)), { webhookPollMs: 20 });
    try {
      const { member, admin } = await keys(s);
      const r = await receiver();
      r.respond = (body, i) => (i === 0 && typeOf(body) === 'Order.created' ? { status: 500 } : undefined);
      const url = `${r.url}?order=1`;
      const made = await call(s.url, 'POST', '/orders', {
        json: { item: 'kettle', callbackUrl: url },
        headers: member,
      });
      expect(made.status).toBe(201);
      const silent = await call(s.url, 'POST', '/orders', { json: { item: 'no hook' }, headers: member });
      expect(silent.status).toBe(201);
      await waitFor(
        () => r.hits.length >= 2,
        () => `2 hits; ${r.hits.length}`,
      );
      const patched = await call(s.url, 'PATCH', `/orders/${made.body.id}`, { json: { cost: 1200 }, headers: admin });
      expect(patched.status).toBe(200);
      expect((await call(s.url, 'POST', `/orders/${made.body.id}/ship`, { json: {}, headers: member })).status).toBe(
        200,
      );
      await waitFor(
        () => r.hits.length >= 4,
        () => `4 hits; ${r.hits.length}`,
      );
      await sleep(300);

      expect((await call(s.url, 'GET', '/_ninefold/callbacks', { headers: member })).status).toBe(403);
      const shown = await call(s.url, 'GET', '/_ninefold/callbacks', { headers: admin });
      expect(shown.status).toBe(200);
      const [order] = shown.body.data;
      expect(order).toMatchObject({
        resource: 'Order',
        field: 'callbackUrl',
        events: ['Order.created', 'Order.updated', 'Order.shipped'],
      });
      expect(order.secret).toMatch(/^whsec_/);
      const payloads = r.hits.map((h) => verifyHit(order.secret, h));
      expect(payloads.map((p) => p.type)).toEqual(['Order.created', 'Order.created', 'Order.updated', 'Order.shipped']);
      expect(r.hits[0]?.headers['webhook-id']).toBe(r.hits[1]?.headers['webhook-id']);
      for (const p of payloads) {
        expect(p.data.record).toMatchObject({ id: made.body.id, callbackUrl: url });
        expect(p.data.record).not.toHaveProperty('cost');
        expect(p.data.changed ?? []).not.toContain('cost');
      }
      expect(r.hits.every((h) => !h.body.includes('no hook') && !h.body.includes('1200'))).toBe(true);
      const byType = new Map(
        (order.deliveries as Array<{ eventId: string; url: string; state: string; log: [] }>).map((d) => [
          payloads.find((p) => p.id === d.eventId)?.type,
          d,
        ]),
      );
      expect(byType.size).toBe(3);
      expect(byType.get('Order.created')?.log.map(outcome)).toEqual([500, 200]);
      expect(byType.get('Order.shipped')).toMatchObject({ url, state: 'delivered' });
    } finally {
      await s.close({ remove: true });
    }
  });

  it('callbacks: signed with NINEFOLD_CALLBACK_SECRET when it is set', async () => {
    const secret = newWebhookSecret();
    process.env.NINEFOLD_CALLBACK_SECRET = secret;
    let s: Served | undefined;
    try {
      s = await servePlan(planOf(CALLBACK_SPEC(true)), { webhookPollMs: 20 });
    } finally {
      delete process.env.NINEFOLD_CALLBACK_SECRET;
    }
    try {
      const { member, admin } = await keys(s);
      const r = await receiver();
      await call(s.url, 'POST', '/orders', { json: { item: 'env', callbackUrl: r.url }, headers: member });
      await waitFor(() => r.hits.length >= 1, 'a hit');
      expect(verifyHit(secret, r.hits[0] as (typeof r.hits)[number]).type).toBe('Order.created');
      expect((await call(s.url, 'GET', '/_ninefold/callbacks', { headers: admin })).body.data[0].secret).toBe(secret);
    } finally {
      await s.close({ remove: true });
    }
  });

  describe('private targets not allowed', () => {
    let s: Served;
    let canary: Canary;
    const names = new Map<string, string>();
    const lookup: LookupFunction = (hostname, options, callback) => {
      const address = names.get(hostname);
      if (!address) return callback(Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' }), '', 0);
      if (options.all) callback(null, [{ address, family: 4 }]);
      else callback(null, address, 4);
    };
    beforeAll(async () => {
      s = await servePlan(planOf(CALLBACK_SPEC(false)), { webhookPollMs: 20, lookup });
      canary = await startCanary();
    });
    afterAll(async () => {
      await s.close({ remove: true });
      await canary.close();
    });

    it('callbacks: a private or invalid callback URL on create or update → 422 invalid_webhook_url; nothing stored', async () => {
      const { member } = await keys(s);
      for (const callbackUrl of [
        'http://127.0.0.1:9/x',
        'http://localhost/x',
        'http://169.254.169.254/latest/meta-data/',
        'http://10.0.0.7/',
        'http://[::1]/',
        'http://0x7f000001/',
        'http://evil@127.0.0.1/',
        'file:///etc/passwd',
      ]) {
        const made = await call(s.url, 'POST', '/orders', { json: { item: 'x', callbackUrl }, headers: member });
        expect(made.status, callbackUrl).toBe(422);
        expect(made.body.code, callbackUrl).toBe('invalid_webhook_url');
        expect(made.body.errors).toEqual([expect.objectContaining({ pointer: '#/callbackUrl' })]);
      }
      // Not a URL at all: the field's own format check answers first.
      const garbage = await call(s.url, 'POST', '/orders', {
        json: { item: 'x', callbackUrl: 'not a url' },
        headers: member,
      });
      expect(garbage.status).toBe(422);
      expect(garbage.body.errors).toEqual([expect.objectContaining({ pointer: '#/callbackUrl' })]);
      expect((await call(s.url, 'GET', '/orders', { headers: member })).body.data).toEqual([]);
      const ok = await call(s.url, 'POST', '/orders', {
        json: { item: 'ok', callbackUrl: 'https://shop.example/cb' },
        headers: member,
      });
      expect(ok.status).toBe(201);
      const patched = await call(s.url, 'PATCH', `/orders/${ok.body.id}`, {
        json: { callbackUrl: 'http://192.168.1.1/' },
        headers: member,
      });
      expect(patched.status).toBe(422);
      expect(patched.body.code).toBe('invalid_webhook_url');
      expect((await call(s.url, 'GET', `/orders/${ok.body.id}`, { headers: member })).body.callbackUrl).toBe(
        'https://shop.example/cb',
      );
    });

    it('callbacks: a callback name that resolves to loopback is refused at connect time (canary 0 connections)', async () => {
      const { member, admin } = await keys(s);
      names.set('cb.example', '127.0.0.1');
      const url = `http://cb.example:${canary.port}/cb`;
      const made = await call(s.url, 'POST', '/orders', {
        json: { item: 'rebound', callbackUrl: url },
        headers: member,
      });
      expect(made.status).toBe(201);
      let log: Array<string | number | undefined> = [];
      await waitFor(
        async () => {
          const shown = await call(s.url, 'GET', '/_ninefold/callbacks', { headers: admin });
          const d = (shown.body.data[0].deliveries as Array<{ url: string; state: string; log: [] }>).find(
            (x) => x.url === url,
          );
          log = d?.log.map(outcome) ?? [];
          return d?.state === 'failed';
        },
        () => `the callback delivery to fail; log ${log}`,
      );
      expect(log).toEqual(Array(3).fill('blocked_destination'));
      expect(canary.connections).toBe(0);
    });
  });
});
