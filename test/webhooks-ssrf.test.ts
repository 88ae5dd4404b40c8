import type { LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../src/parts/auth/keys.ts';
import { isBlockedAddress } from '../src/parts/events/targets.ts';
import { guardedLookup } from '../src/parts/events/webhook-post.ts';
import { call, planOf, type Served, servePlan } from './helpers/serve-spec.ts';
import { type DeliveryView, outcome, registerEndpoint, settleDeliveries } from './helpers/webhook-api.ts';
import { type Canary, receiverPool } from './helpers/webhook-receiver.ts';

// RELIABILITY.md §2.4 W11–W12: private targets refused when an endpoint is registered (everything decidable
// without connecting) and again when a delivery connects (the address connected to is the one checked). Private
// targets are not allowed here, and DNS is a stub the test programs.
const SPEC = `
ninefold: 1
service: { name: hook-ssrf }
resources:
  Note:
    fields:
      title: { type: string, required: true }
      owner: { type: string }
auth:
  schemes: { key: { type: apiKey, in: header, name: X-Api-Key } }
  require: [key]
  roles: { member: Writes notes. }
  rules:
    Note: { owner: owner }
events:
  auto: true
  webhooks: { retry: [50ms, 50ms], timeout: 1s }
endpoints:
  Note: { operations: [list, get, create] }
`;

/** The DNS stub: answers per name, changed by the tests; every question is noted. */
const dns = new Map<string, LookupAddress[]>();
const asked: string[] = [];
const stubLookup: LookupFunction = (hostname, options, callback) => {
  asked.push(hostname);
  const answers = dns.get(hostname);
  if (!answers?.length) {
    return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
  }
  if (options.all) return callback(null, answers);
  const [first] = answers as [LookupAddress];
  callback(null, first.address, first.family);
};
const v4 = (address: string): LookupAddress => ({ address, family: 4 });
const v6 = (address: string): LookupAddress => ({ address, family: 6 });

let s: Served;
let canary: Canary;
const pool = receiverPool();
beforeAll(async () => {
  s = await servePlan(planOf(SPEC), { webhookPollMs: 20, lookup: stubLookup });
  canary = await pool.canary();
});
afterAll(async () => {
  await s.close({ remove: true });
  await pool.closeAll();
});

const member = async (subject: string) => ({
  'x-api-key': (await issueApiKey(s.store, { subject, roles: ['member'] })).key,
});
const settle = (endpointId: string, key: Record<string, string>, check: (ds: DeliveryView[]) => boolean) =>
  settleDeliveries(s.url, endpointId, key, check);

const W11_URLS = [
  'http://127.0.0.1:5432/',
  'http://localhost/hook',
  'http://LOCALHOST./hook',
  'http://hooks.localhost/',
  'http://[::1]/',
  'http://0.0.0.0/',
  'http://[::]/',
  'http://169.254.169.254/latest/meta-data/',
  'http://10.0.0.1/',
  'http://10.255.1.2:8080/',
  'http://172.16.0.1/',
  'http://172.31.255.254/',
  'http://192.168.0.10/',
  'http://100.64.0.1/',
  'http://[fc00::1]/',
  'http://[fd12:3456::1]/',
  'http://[fe80::1]/',
  'http://[::ffff:127.0.0.1]/',
  'http://[::ffff:a9fe:a9fe]/',
  'http://[64:ff9b::7f00:1]/',
  'http://[64:ff9b::169.254.169.254]/',
  'http://198.18.0.1/',
  'http://2130706433/',
  'http://0x7f000001/',
  'http://0177.0.0.1/',
  'http://127.1/',
  'file:///etc/passwd',
  'gopher://127.0.0.1:70/_x',
  'ftp://files.example/',
  'http://evil@127.0.0.1/',
  'http://user:pass@hooks.example/',
  'not a url',
];

describe('W11 SSRF at registration', () => {
  it('W11 every private, loopback, link-local, odd-form, non-http or credentialed URL → 422 invalid_webhook_url; nothing stored', async () => {
    const key = await member('w11');
    dns.set('hooks.example', [v4('93.184.216.34')]);
    for (const url of W11_URLS) {
      const made = await call(s.url, 'POST', '/webhook-endpoints', { json: { url }, headers: key });
      expect(made.status, url).toBe(422);
      expect(made.body.code, url).toBe('invalid_webhook_url');
      expect(made.body.errors, url).toEqual([expect.objectContaining({ pointer: '#/url', code: 'forbidden_target' })]);
    }
    expect((await call(s.url, 'GET', '/webhook-endpoints', { headers: key })).body.data).toEqual([]);
    expect(await s.countRows('_ninefold_webhook_endpoints')).toBe(0);
    // A public name is fine, and changing it to a private address later is refused the same way.
    const ep = await registerEndpoint(s.url, key, { url: 'https://hooks.example/in' });
    for (const url of ['http://127.0.0.1/', 'http://[::ffff:10.0.0.1]/']) {
      const patched = await call(s.url, 'PATCH', `/webhook-endpoints/${ep.id}`, { json: { url }, headers: key });
      expect(patched.status, url).toBe(422);
      expect(patched.body.code).toBe('invalid_webhook_url');
    }
    expect((await call(s.url, 'GET', `/webhook-endpoints/${ep.id}`, { headers: key })).body.url).toBe(
      'https://hooks.example/in',
    );
    await call(s.url, 'DELETE', `/webhook-endpoints/${ep.id}`, { headers: key });
  });

  it('W11 a name the resolver answers with a private address (A or AAAA) is refused at registration', async () => {
    const key = await member('w11-dns');
    dns.set('inside.example', [v4('10.1.2.3')]);
    dns.set('inside6.example', [v4('93.184.216.34'), v6('fd00::5')]);
    for (const host of ['inside.example', 'inside6.example', 'nowhere.example']) {
      const made = await call(s.url, 'POST', '/webhook-endpoints', { json: { url: `https://${host}/` }, headers: key });
      expect(made.status, host).toBe(422);
      expect(made.body.code).toBe('invalid_webhook_url');
      expect(asked).toContain(host);
    }
    expect(await s.countRows('_ninefold_webhook_endpoints')).toBe(0);
  });
});

describe('W12 SSRF at delivery', () => {
  /** Registers `host` while it resolves to a public address, then points it at the canary and makes an event. */
  const rebind = async (subject: string, host: string, atDelivery: LookupAddress[]) => {
    const key = await member(subject);
    dns.set(host, [v4('93.184.216.34')]);
    const ep = await registerEndpoint(s.url, key, { url: `http://${host}:${canary.port}/hook` });
    dns.set(host, atDelivery);
    const made = await call(s.url, 'POST', '/notes', { json: { title: subject }, headers: key });
    expect(made.status).toBe(201);
    const [d] = await settle(ep.id, key, (ds) => ds[0]?.state === 'failed');
    return d as DeliveryView;
  };

  it('W12 DNS rebinding: public at registration, 127.0.0.1 at delivery → blocked_destination, canary 0 connections', async () => {
    const d = await rebind('w12-a', 'rebind.example', [v4('127.0.0.1')]);
    expect(d.log.map(outcome)).toEqual(['blocked_destination', 'blocked_destination', 'blocked_destination']);
    expect(canary.connections).toBe(0);
  });

  it('W12 AAAA answers ::1 and ::ffff:127.0.0.1 are blocked too', async () => {
    for (const [i, answer] of [[v6('::1')], [v6('::ffff:127.0.0.1')], [v6('::ffff:7f00:1')]].entries()) {
      const d = await rebind(`w12-v6-${i}`, `v6-${i}.example`, answer);
      expect(d.log.map(outcome), answer[0]?.address).toEqual(Array(3).fill('blocked_destination'));
    }
    expect(canary.connections).toBe(0);
  });

  it('W12 one private address among public ones blocks the connection (node may try any of them)', async () => {
    const d = await rebind('w12-mixed', 'mixed.example', [v4('93.184.216.34'), v4('127.0.0.1'), v6('::1')]);
    expect(d.log.map(outcome)).toEqual(Array(3).fill('blocked_destination'));
    expect(canary.connections).toBe(0);
  });

  it('W12 the guarded lookup answers in the form node asks for (a list when `all`), refusing blocked addresses', async () => {
    const ask = (host: string, all: boolean) =>
      new Promise<{ error?: string; answer?: unknown }>((ok) =>
        guardedLookup(stubLookup)(host, { all }, (error, address, family) =>
          ok(error ? { error: (error as NodeJS.ErrnoException).code } : { answer: all ? address : [address, family] }),
        ),
      );
    dns.set('two.example', [v4('93.184.216.34'), v6('2606:4700::1111')]);
    dns.set('bad.example', [v4('93.184.216.34'), v4('169.254.169.254')]);
    expect(await ask('two.example', true)).toEqual({ answer: [v4('93.184.216.34'), v6('2606:4700::1111')] });
    expect(await ask('two.example', false)).toEqual({ answer: ['93.184.216.34', 4] });
    expect(await ask('bad.example', true)).toEqual({ error: 'EBLOCKED' });
    expect(await ask('bad.example', false)).toEqual({ error: 'EBLOCKED' });
    expect(await ask('missing.example', true)).toEqual({ error: 'ENOTFOUND' });
  });

  // A delivery that gets through the guard needs a local address that is not private: the sandbox's own
  // interface has one (192.0.2.x); elsewhere the case is skipped (the guarded lookup case above covers the form).
  const publicLocal = Object.values(networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal && !isBlockedAddress(a.address))?.address;

  it.skipIf(!publicLocal)(
    'W12 a public name is delivered through the guard; a 302 to the metadata address is not followed',
    async () => {
      const key = await member('w12-public');
      const r = await pool.receiver(publicLocal as string);
      dns.set('public.example', [v4(publicLocal as string)]);
      dns.set('metadata.example', [v4('169.254.169.254')]);
      r.queue(
        { status: 302, headers: { location: 'http://169.254.169.254/latest/meta-data/' } },
        { status: 302, headers: { location: `http://metadata.example:${canary.port}/latest/meta-data/` } },
      );
      const ep = await registerEndpoint(s.url, key, { url: `http://public.example:${r.port}/hook` });
      asked.length = 0;
      await call(s.url, 'POST', '/notes', { json: { title: 'w12 public' }, headers: key });
      const [d] = await settle(ep.id, key, (ds) => ds[0]?.state === 'delivered');
      expect(d?.log.map(outcome)).toEqual([302, 302, 200]);
      expect(r.hits).toHaveLength(3);
      expect(asked.filter((h) => h !== 'public.example')).toEqual([]);
      expect(canary.connections).toBe(0);
    },
  );
});
