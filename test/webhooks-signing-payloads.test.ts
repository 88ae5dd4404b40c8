import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReplayGuard, verifyWebhook, WebhookVerificationError } from '../src/index.ts';
import { issueApiKey } from '../src/parts/auth/keys.ts';
import { newWebhookSecret } from '../src/parts/events/signing.ts';
import { call, planOf, type Served, servePlan } from './helpers/serve-spec.ts';
import { waitFor } from './helpers/wait-for.ts';
import { registerEndpoint, verifyHit } from './helpers/webhook-api.ts';
import { type Hit, type Receiver, receiverPool } from './helpers/webhook-receiver.ts';

// RELIABILITY.md §2.4 W9 (signing), W13 (ordering: the event's time is in the payload) and W14 (payload
// hygiene), over real HTTP, every delivery verified with the standardwebhooks package.
const SPEC = `
ninefold: 1
service: { name: hook-payloads }
resources:
  Account:
    fields:
      name: { type: string, required: true }
      owner: { type: string }
      pin: { type: string, writeOnly: true }
      credit: { type: integer, readableBy: [staff] }
auth:
  schemes: { key: { type: apiKey, in: header, name: X-Api-Key } }
  require: [key]
  roles: { member: Holds accounts., staff: Sees every account. }
  rules:
    Account:
      owner: owner
      read: "record.owner == principal.subject || 'staff' in principal.roles"
events:
  auto: true
  webhooks: { retry: [100ms, 100ms, 100ms], allowPrivateTargets: true }
endpoints:
  Account: { operations: [list, get, create, update] }
`;

/** The service's clock runs ahead of the real one by `offset` ms (the tests move it). */
let offset = 0;
let s: Served;
const pool = receiverPool();
const receiver = () => pool.receiver();
beforeAll(async () => {
  s = await servePlan(planOf(SPEC), { webhookPollMs: 20, now: () => new Date(Date.now() + offset) });
});
afterAll(async () => {
  await s.close({ remove: true });
  await pool.closeAll();
});

const keyOf = async (subject: string, roles: string[]) => ({
  'x-api-key': (await issueApiKey(s.store, { subject, roles })).key,
});
const create = async (key: Record<string, string>, json: Record<string, unknown>) => {
  const made = await call(s.url, 'POST', '/accounts', { json, headers: key });
  expect(made.status, made.text).toBe(201);
  return made.body as { id: string; createdAt: string };
};
const hitsOf = async (r: Receiver, n: number) => {
  await waitFor(
    () => r.hits.length >= n,
    () => `${n} hits; ${r.hits.length} so far`,
    10,
  );
  return r.hits;
};
const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));
const signaturesOf = (hit: Hit) => String(hit.headers['webhook-signature']).split(' ');

describe('W13 and W14 payloads', () => {
  it('W13 the payload carries the event’s id, type and time (ordering is not promised, the time is)', async () => {
    const key = await keyOf('w13', ['member']);
    const r = await receiver();
    const ep = await registerEndpoint(s.url, key, { url: r.url, events: ['Account.created', 'Account.updated'] });
    const made = await create(key, { name: 'w13' });
    const updated = await call(s.url, 'PATCH', `/accounts/${made.id}`, { json: { name: 'w13 renamed' }, headers: key });
    expect(updated.status).toBe(200);
    const hits = await hitsOf(r, 2);
    const payloads = hits.map((h) => verifyHit(ep.secret, h)).sort((a, b) => a.type.localeCompare(b.type));
    expect(payloads.map((p) => p.type)).toEqual(['Account.created', 'Account.updated']);
    expect(payloads[0]?.time).toBe(made.createdAt);
    for (const p of payloads) {
      expect(p.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
      const logged = await call(s.url, 'GET', `/events/${p.id}`, { headers: key });
      expect(logged.status).toBe(200);
      expect(logged.body.time).toBe(p.time);
    }
  });

  it('W14 write-only and hidden fields never in a payload; records the owner cannot read never sent; small payloads', async () => {
    const ann = await keyOf('ann', ['member']);
    const bob = await keyOf('bob', ['member']);
    const staffKey = await keyOf('sam', ['staff']);
    const annHook = await receiver();
    const staffHook = await receiver();
    const annEp = await registerEndpoint(s.url, ann, { url: annHook.url });
    const staffEp = await registerEndpoint(s.url, staffKey, { url: staffHook.url });
    const mine = await create(ann, { name: 'ann’s', pin: 'PIN-4711', credit: 250 });
    await create(bob, { name: 'bob’s', pin: 'PIN-0815', credit: 990 });
    const patched = await call(s.url, 'PATCH', `/accounts/${mine.id}`, {
      json: { credit: 300, pin: 'PIN-4712' },
      headers: ann,
    });
    expect(patched.status).toBe(200);
    await hitsOf(staffHook, 3);
    await hitsOf(annHook, 2);
    await sleep(200);
    const annGot = annHook.hits.map((h) => verifyHit(annEp.secret, h));
    const staffGot = staffHook.hits.map((h) => verifyHit(staffEp.secret, h));
    expect(annGot.map((p) => [p.type, (p.data.record as { name: string }).name]).sort()).toEqual([
      ['Account.created', 'ann’s'],
      ['Account.updated', 'ann’s'],
    ]);
    for (const h of [...annHook.hits, ...staffHook.hits]) {
      expect(h.body).not.toContain('PIN-');
      expect(h.body).not.toMatch(/"pin"\s*:/);
      expect(Buffer.byteLength(h.body)).toBeLessThan(20 * 1024);
    }
    for (const p of annGot) {
      expect(p.data.record).not.toHaveProperty('credit');
      expect(p.data.changed ?? []).not.toContain('credit');
    }
    // The staff endpoint may read both records and the credit field: readableBy follows the endpoint's owner.
    expect(staffGot).toHaveLength(3);
    expect(staffGot.map((p) => (p.data.record as { credit: number }).credit).sort()).toEqual([250, 300, 990]);
    expect(staffGot.find((p) => p.type === 'Account.updated')?.data.changed).toContain('credit');
    // Thin enough: the record as the owner reads it, and little more.
    const read = await call(s.url, 'GET', `/accounts/${mine.id}`, { headers: ann });
    const created = annHook.hits.find((h) => h.body.includes('"Account.created"')) as Hit;
    expect(Buffer.byteLength(created.body)).toBeLessThan(Buffer.byteLength(read.text) + 300);
  });
});

// Last: these move the service's clock ahead (by a day, at the end).
describe('W9 signing', () => {
  it('W9 every attempt verifies; webhook-id stable across retries; webhook-timestamp fresh on each attempt', async () => {
    const key = await keyOf('w9', ['member']);
    const r = await receiver();
    // Two failures, then success; the service's clock moves 10 s on at each attempt.
    r.respond = (_body, i) => {
      offset += 10_000;
      return i < 2 ? { status: 500 } : undefined;
    };
    const ep = await registerEndpoint(s.url, key, { url: r.url });
    await create(key, { name: 'w9' });
    const hits = await hitsOf(r, 3);
    await sleep(150);
    expect(hits).toHaveLength(3);
    const payloads = hits.map((h) => verifyHit(ep.secret, h));
    expect(new Set(hits.map((h) => h.headers['webhook-id'])).size).toBe(1);
    expect(payloads.every((p) => p.id === hits[0]?.headers['webhook-id'])).toBe(true);
    const stamps = hits.map((h) => Number(h.headers['webhook-timestamp']));
    for (let i = 1; i < stamps.length; i++)
      expect((stamps[i] as number) - (stamps[i - 1] as number)).toBeGreaterThanOrEqual(10);
    // The signature covers the exact bytes sent: one byte more and it does not hold.
    expect(() =>
      new Webhook(ep.secret).verify(`${hits[0]?.body} `, {
        'webhook-id': String(hits[0]?.headers['webhook-id']),
        'webhook-timestamp': String(hits[0]?.headers['webhook-timestamp']),
        'webhook-signature': String(hits[0]?.headers['webhook-signature']),
      }),
    ).toThrow();
    expect(() => verifyHit(newWebhookSecret(), hits[0] as Hit)).toThrow();
  });

  it('W10 a receiver verifying with verifyWebhook: real deliveries and their retries pass, a replayed capture does not', async () => {
    const key = await keyOf('w10', ['member']);
    const r = await receiver();
    // The first attempt fails; the retry comes (by the service's clock) 10 s later, with a fresh timestamp.
    r.respond = (_body, i) => {
      if (i > 0) return undefined;
      offset += 10_000;
      return { status: 503 };
    };
    const ep = await registerEndpoint(s.url, key, { url: r.url });
    await create(key, { name: 'w10' });
    const [failed, delivered] = await hitsOf(r, 2);
    const clock = () => new Date(Date.now() + offset);
    const seen = createReplayGuard(600, clock);
    const check = (hit: Hit, now = clock) => {
      try {
        verifyWebhook(ep.secret, hit.headers, hit.body, { now, seen });
        return 'accepted';
      } catch (error) {
        return (error as WebhookVerificationError).reason;
      }
    };
    // The first attempt and its retry share the webhook-id, with fresh timestamps: both verify.
    expect(failed?.headers['webhook-id']).toBe(delivered?.headers['webhook-id']);
    expect(check(failed as Hit)).toBe('accepted');
    expect(check(delivered as Hit)).toBe('accepted');
    // The same bytes sent again (a captured delivery) are refused; six minutes later the timestamp refuses it.
    expect(check(delivered as Hit)).toBe('replayed');
    expect(check(delivered as Hit, () => new Date(clock().getTime() + 6 * 60_000))).toBe('stale_timestamp');
    expect(() =>
      verifyWebhook(newWebhookSecret(), (delivered as Hit).headers, (delivered as Hit).body, { now: clock }),
    ).toThrow(WebhookVerificationError);
  });

  it('W9 rotation: for a day both signatures are sent, each verifying with its own secret; then only the new one', async () => {
    const key = await keyOf('w9-rotate', ['member']);
    const r = await receiver();
    const ep = await registerEndpoint(s.url, key, { url: r.url });
    const rotated = await call(s.url, 'POST', `/webhook-endpoints/${ep.id}/rotate-secret`, { headers: key });
    expect(rotated.status).toBe(200);
    const fresh = rotated.body.secret as string;
    expect(fresh).not.toBe(ep.secret);
    await create(key, { name: 'w9 rotated' });
    const [hit] = await hitsOf(r, 1);
    const [first, second] = signaturesOf(hit as Hit);
    expect(signaturesOf(hit as Hit)).toHaveLength(2);
    expect(() => verifyHit(fresh, hit as Hit, first)).not.toThrow();
    expect(() => verifyHit(ep.secret, hit as Hit, second)).not.toThrow();
    expect(() => verifyHit(fresh, hit as Hit, second)).toThrow();
    expect(() => verifyHit(ep.secret, hit as Hit, first)).toThrow();
    // A day and an hour later the old secret is no longer used. The clock is ahead of the real one, so the
    // signature is checked by signing the same bytes (standardwebhooks refuses timestamps that far off).
    offset += 25 * 3_600_000;
    await create(key, { name: 'w9 later' });
    const later = (await hitsOf(r, 2))[1] as Hit;
    const stamp = new Date(Number(later.headers['webhook-timestamp']) * 1000);
    expect(signaturesOf(later)).toEqual([
      new Webhook(fresh).sign(String(later.headers['webhook-id']), stamp, later.body),
    ]);
    expect(Math.abs(stamp.getTime() - (Date.now() + offset))).toBeLessThan(5000);
  });
});
