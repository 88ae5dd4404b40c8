import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../src/parts/auth/keys.ts';
import type { Store } from '../src/storage/index.ts';
import { call, planOf, rawSend, type Served, servePlan } from './helpers/serve-spec.ts';
import { planOfFile } from './helpers/serve-states.ts';
import { testClock } from './helpers/test-clock.ts';

// Rate limits of part 8 over HTTP, on a clock the test moves (L1, L3, L4, L7; RELIABILITY.md §2.5).
const spec = (limits: string) => `
ninefold: 1
service: { name: rate-test }
resources:
  Note:
    fields: { text: { type: string, required: true } }
auth:
  schemes: { key: { type: apiKey, in: header, name: X-Api-Key } }
  require: public
  roles: { staff: Works here., writer: Writes. }
${limits}
`;

const QUOTA_TYPE = 'https://iana.org/assignments/http-problem-types#quota-exceeded';
const START = new Date('2026-03-02T10:00:00Z');

describe('rate limits per principal', () => {
  let s: Served;
  const clock = testClock(START);
  let alice: string;
  let bob: string;
  let staff: string;
  beforeAll(async () => {
    s = await servePlan(
      planOf(
        spec(`limits:
  rate:
    default: 5/min
    by: principal
    roles: { staff: 20/min, anonymous: 2/min }
    endpoints: { "POST /notes": 2/min, Note.delete: 1/min }`),
      ),
      { now: clock.now },
    );
    alice = (await issueApiKey(s.store, { roles: ['writer'], subject: 'alice' })).key;
    bob = (await issueApiKey(s.store, { roles: ['writer'], subject: 'bob' })).key;
    staff = (await issueApiKey(s.store, { roles: ['staff'], subject: 'sam' })).key;
  });
  afterAll(() => s.close({ remove: true }));

  const list = (key?: string) => call(s.url, 'GET', '/notes', key ? { headers: { 'x-api-key': key } } : {});

  it('lets exactly q through in a window, tells where the caller stands, and refuses the rest with 429', async () => {
    const answers = [];
    for (let i = 0; i < 8; i++) answers.push(await list(alice));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
    expect(answers.map((a) => a.headers.get('ratelimit'))).toEqual([
      '"default";r=4;t=12',
      '"default";r=3;t=24',
      '"default";r=2;t=36',
      '"default";r=1;t=48',
      '"default";r=0;t=60',
      '"default";r=0;t=60',
      '"default";r=0;t=60',
      '"default";r=0;t=60',
    ]);
    for (const a of answers) expect(a.headers.get('ratelimit-policy')).toBe('"default";q=5;w=60');
    const refused = answers[5];
    expect(refused?.headers.get('content-type')).toContain('application/problem+json');
    expect(refused?.headers.get('retry-after')).toBe('12');
    expect(refused?.body).toMatchObject({
      type: QUOTA_TYPE,
      status: 429,
      code: 'rate_limited',
      'violated-policies': ['default'],
    });
  });

  it('gives another principal its own bucket (L3)', async () => {
    expect((await list(bob)).status).toBe(200);
    expect((await list(alice)).status).toBe(429);
  });

  it('gives back one request per interval, and the whole quota after the window (L4)', async () => {
    clock.advance(12_000);
    expect((await list(alice)).status).toBe(200);
    expect((await list(alice)).status).toBe(429);
    clock.advance(60_000);
    const fresh = await list(alice);
    expect(fresh.status).toBe(200);
    expect(fresh.headers.get('ratelimit')).toBe('"default";r=4;t=12');
  });

  it('lets concurrent requests through exactly q times', async () => {
    clock.advance(120_000);
    const answers = await Promise.all(Array.from({ length: 15 }, () => list(bob)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(5);
    expect(answers.filter((a) => a.status === 429)).toHaveLength(10);
  });

  it('gives a role its own rate (staff higher), and anonymous callers a lower one, counted by address', async () => {
    clock.advance(120_000);
    const staffAnswers = [];
    for (let i = 0; i < 21; i++) staffAnswers.push((await list(staff)).status);
    expect(staffAnswers.filter((c) => c === 200)).toHaveLength(20);
    expect(staffAnswers[20]).toBe(429);
    const first = await list();
    expect(first.headers.get('ratelimit-policy')).toBe('"anonymous";q=2;w=60');
    expect((await list()).status).toBe(200);
    const third = await list();
    expect(third.status).toBe(429);
    expect(third.body['violated-policies']).toEqual(['anonymous']);
  });

  it('adds a route policy to the general one, by route or by operation, and names the one refused', async () => {
    clock.advance(120_000);
    const post = () => call(s.url, 'POST', '/notes', { json: { text: 'x' }, headers: { 'x-api-key': bob } });
    const one = await post();
    expect(one.status).toBe(201);
    expect(one.headers.get('ratelimit-policy')).toBe('"default";q=5;w=60, "POST /notes";q=2;w=60');
    expect(one.headers.get('ratelimit')).toBe('"default";r=4;t=12, "POST /notes";r=1;t=30');
    expect((await post()).status).toBe(201);
    const third = await post();
    expect(third.status).toBe(429);
    expect(third.body['violated-policies']).toEqual(['POST /notes']);
    // The refused POST took nothing from the general policy: two of five are used.
    expect((await list(bob)).headers.get('ratelimit')).toBe('"default";r=2;t=36');
    const del = (id: string) => call(s.url, 'DELETE', `/notes/${id}`, { headers: { 'x-api-key': bob } });
    expect((await del(one.body.id)).status).toBe(204);
    const again = await del(one.body.id);
    expect(again.status).toBe(429);
    expect(again.body['violated-policies']).toEqual(['Note.delete']);
  });

  it('writes the fields once each, over a connection and through Fastify inject alike', async () => {
    clock.advance(120_000);
    const wire = await list(alice);
    expect(wire.headers.get('ratelimit-policy')).toBe('"default";q=5;w=60');
    expect(wire.headers.get('ratelimit')).toBe('"default";r=4;t=12');
    // inject answers on a response of its own: the fields go through Fastify's header object instead.
    const injected = await s.app.inject({ method: 'GET', url: '/notes', headers: { 'x-api-key': alice } });
    expect(injected.statusCode).toBe(200);
    expect(injected.headers['ratelimit-policy']).toBe('"default";q=5;w=60');
    expect(injected.headers.ratelimit).toBe('"default";r=3;t=24');
    // A 404 after the limit still tells where the caller stands, once (a field sent twice would read "a, a" here).
    const missing = await call(s.url, 'GET', '/notes/nope', { headers: { 'x-api-key': alice } });
    expect(missing.status).toBe(404);
    expect(missing.headers.get('ratelimit-policy')).toBe('"default";q=5;w=60');
    expect(missing.headers.get('ratelimit')).toBe('"default";r=2;t=36');
  });

  it('leaves health and the documents alone', async () => {
    for (let i = 0; i < 5; i++) {
      const health = await call(s.url, 'GET', '/healthz');
      expect(health.status).toBe(200);
      expect(health.headers.get('ratelimit')).toBeNull();
    }
  });
});

describe('a refused request', () => {
  let s: Served;
  let storeCalls = 0;
  const clock = testClock(START);
  /** Counts every call into the store and its parts (records, counters, keys, …). */
  const counting = (store: Store): Store => {
    const wrap = <T extends object>(target: T): T =>
      new Proxy(target, {
        get(t, name, receiver) {
          const value = Reflect.get(t, name, receiver);
          if (typeof value === 'function')
            return (...args: unknown[]) => {
              storeCalls++;
              return (value as (...a: unknown[]) => unknown).apply(t, args);
            };
          if (value && typeof value === 'object' && name !== 'signals') return wrap(value as object);
          return value;
        },
      });
    return wrap(store);
  };
  beforeAll(async () => {
    s = await servePlan(planOf(spec('limits: { rate: { default: 1/min, by: ip } }')), {
      now: clock.now,
      store: counting,
    });
  });
  afterAll(() => s.close({ remove: true }));

  it('is answered before its body is read and costs no database work', async () => {
    expect((await call(s.url, 'POST', '/notes', { json: { text: 'first' } })).status).toBe(201);
    const before = storeCalls;
    expect(before).toBeGreaterThan(0);
    // Not JSON at all: read, it would be 400 invalid_json.
    const refused = await rawSend(s.url, 'POST', '/notes', '{not json', { 'content-type': 'application/json' });
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.text).code).toBe('rate_limited');
    const get = await call(s.url, 'GET', '/notes');
    expect(get.status).toBe(429);
    expect(storeCalls - before).toBe(0);
    expect(await s.countRows('note')).toBe(1);
  });
});

describe('the client address', () => {
  const clock = testClock(START);
  const served: Served[] = [];
  afterAll(async () => {
    for (const s of served) await s.close({ remove: true });
  });
  const serve = async (limits: string) => {
    const s = await servePlan(planOf(spec(limits)), { now: clock.now });
    served.push(s);
    return s;
  };
  const from = (s: Served, headers: Record<string, string>) => call(s.url, 'GET', '/notes', { headers });

  it('ignores X-Forwarded-For and Forwarded without trusted proxies: no client picks its own bucket', async () => {
    const s = await serve('limits: { rate: { default: 2/min, by: ip } }');
    expect((await from(s, { 'x-forwarded-for': '198.51.100.1' })).status).toBe(200);
    expect((await from(s, { 'x-forwarded-for': '198.51.100.2' })).status).toBe(200);
    expect((await from(s, { forwarded: 'for=198.51.100.3' })).status).toBe(429);
  });

  it('believes them from a trusted proxy, reading past trusted hops to the first untrusted address', async () => {
    const s = await serve('limits: { rate: { default: 1/min, by: ip }, trustProxy: [127.0.0.0/8, "10.0.0.0/8"] }');
    expect((await from(s, { 'x-forwarded-for': '198.51.100.1' })).status).toBe(200);
    expect((await from(s, { 'x-forwarded-for': '198.51.100.2' })).status).toBe(200);
    expect((await from(s, { 'x-forwarded-for': '198.51.100.1' })).status).toBe(429);
    // A client writing its own entry at the left of the chain is still counted under the address the proxy saw.
    expect((await from(s, { 'x-forwarded-for': '203.0.113.9, 198.51.100.2, 10.1.2.3' })).status).toBe(429);
    expect((await from(s, { forwarded: 'for=192.0.2.60;proto=http, for="[2001:db8::17]:4711"' })).status).toBe(200);
    expect((await from(s, { forwarded: 'for="[2001:db8::17]"' })).status).toBe(429);
  });
});

describe('accuracy', () => {
  it('accepts the limit within 2 % from a client sending 3x its limit for 30 s (virtual clock)', async () => {
    const clock = testClock(START);
    const s = await servePlan(planOf(spec('limits: { rate: { default: 10/s, by: ip } }')), { now: clock.now });
    try {
      let accepted = 0;
      // 30 requests a second for 30 s, one every 1/30 s of the server's clock.
      for (let i = 0; i < 900; i++) {
        if ((await call(s.url, 'GET', '/notes')).status === 200) accepted++;
        clock.advance(1000 / 30);
      }
      // 10/s for 30 s, plus the burst a window allows at the start (q = 10).
      const limit = 10 * 30 + 10;
      expect(Math.abs(accepted - limit)).toBeLessThanOrEqual(limit * 0.02);
    } finally {
      await s.close({ remove: true });
    }
  });
});

describe('the order desk (examples/orders)', () => {
  it('runs its declared limits: 100/min per caller, POST /orders 10/s, and the Order.create quota', async () => {
    const clock = testClock(START);
    const s = await servePlan(await planOfFile('examples/orders/service.yaml'), { now: clock.now });
    try {
      const staff = { 'x-api-key': (await issueApiKey(s.store, { subject: 'staff-1', roles: ['admin'] })).key };
      const c = await call(s.url, 'POST', '/customers', {
        json: { email: 'ada@example.com', fullName: 'Ada' },
        headers: staff,
      });
      expect(c.status).toBe(201);
      expect(c.headers.get('ratelimit-policy')).toBe('"default";q=100;w=60');
      const post = () => call(s.url, 'POST', '/orders', { json: { customer: c.body.id }, headers: staff });
      const first = await post();
      expect(first.status).toBe(201);
      expect(first.headers.get('ratelimit-policy')).toBe(
        '"default";q=100;w=60, "POST /orders";q=10;w=1, "Order.create";q=1000;w=86400',
      );
      for (let i = 0; i < 9; i++) expect((await post()).status).toBe(201);
      const refused = await post();
      expect(refused.status).toBe(429);
      expect(refused.body['violated-policies']).toEqual(['POST /orders']);
      const usage = await call(s.url, 'GET', '/_ninefold/usage', { headers: staff });
      expect(usage.body.quotas).toEqual([expect.objectContaining({ operation: 'Order.create', used: 10 })]);
    } finally {
      await s.close({ remove: true });
    }
  });
});
