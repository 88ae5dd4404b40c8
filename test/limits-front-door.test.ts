import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../src/parts/auth/keys.ts';
import type { Store } from '../src/storage/index.ts';
import { SHARED_REDIS_URL } from './helpers/redis-server.ts';
import { call, planOf, rawSend, type Served, servePlan } from './helpers/serve-spec.ts';
import { testClock } from './helpers/test-clock.ts';

// The front door (src/parts/limits/front-door.ts): rate limits decided before Fastify routes a request, for callers
// without credentials on public routes. Its answers must be the rate step's, each request counted once.
const spec = (limits: string) => `
ninefold: 1
service: { name: door-test }
resources:
  Note:
    fields: { text: { type: string, required: true } }
auth:
  schemes: { key: { type: apiKey, in: header, name: X-Api-Key } }
  require: public
endpoints:
  Note:
    operations: [list, get, create, delete]
    overrides: { delete: { require: [key] } }
${limits}
`;
const START = new Date('2026-03-02T10:00:00Z');

/** Counts every call into the store and its parts. */
const counting = (counter: { calls: number }) => (store: Store) => {
  const wrap = <T extends object>(target: T): T =>
    new Proxy(target, {
      get(t, name, receiver) {
        const value = Reflect.get(t, name, receiver);
        if (typeof value === 'function')
          return (...args: unknown[]) => {
            counter.calls++;
            return (value as (...a: unknown[]) => unknown).apply(t, args);
          };
        if (value && typeof value === 'object' && name !== 'signals') return wrap(value as object);
        return value;
      },
    });
  return wrap(store);
};

/** Every header but those that differ per request. */
const stable = (headers: Headers) =>
  Object.fromEntries([...headers].filter(([name]) => !['x-request-id', 'date', 'ratelimit'].includes(name)));

describe('the front door', () => {
  let s: Served;
  const store = { calls: 0 };
  const lines: string[] = [];
  const clock = testClock(START);
  let key: string;
  beforeAll(async () => {
    s = await servePlan(planOf(spec('limits: { rate: { default: 3/min, by: ip, endpoints: { Note.get: 1/min } } }')), {
      now: clock.now,
      store: counting(store),
      logLevel: 'info',
      logStream: { write: (line: string) => void lines.push(line) },
    });
    key = (await issueApiKey(s.store, { roles: [], subject: 'kim' })).key;
  });
  afterAll(() => s.close({ remove: true }));

  it('counts a request it lets through once: RateLimit remaining falls by exactly 1', async () => {
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await call(s.url, 'GET', '/notes'));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 429]);
    expect(answers.map((a) => a.headers.get('ratelimit'))).toEqual([
      '"default";r=2;t=20',
      '"default";r=1;t=40',
      '"default";r=0;t=60',
      '"default";r=0;t=60',
    ]);
    for (const a of answers) expect(a.headers.get('ratelimit-policy')).toBe('"default";q=3;w=60');
  });

  it("refuses with the rate step's answer (L7), byte for byte, reading no body and doing no database work", async () => {
    const before = store.calls;
    // Not JSON at all: read, it would be 400 invalid_json.
    const raw = await rawSend(s.url, 'POST', '/notes?x=1', '{not json', {
      'content-type': 'application/json',
      'x-request-id': 'door-1',
    });
    expect(raw.status).toBe(429);
    const atDoor = await call(s.url, 'GET', '/notes', { headers: { 'x-request-id': 'door-2' } });
    expect(store.calls - before).toBe(0);
    // A caller with a key on the same address (by: ip) is refused by the rate step, after authentication.
    const inLifecycle = await call(s.url, 'GET', '/notes', { headers: { 'x-api-key': key } });
    expect(atDoor.status).toBe(429);
    expect(inLifecycle.status).toBe(429);
    expect(atDoor.text).toBe(inLifecycle.text);
    const { 'cache-control': _noStore, ...lifecycleHeaders } = stable(inLifecycle.headers);
    expect(stable(atDoor.headers)).toEqual(lifecycleHeaders);
    expect(atDoor.headers.get('x-request-id')).toBe('door-2');
    expect(atDoor.headers.get('retry-after')).toBe('20');
    expect(atDoor.body).toEqual({
      type: 'https://iana.org/assignments/http-problem-types#quota-exceeded',
      title: 'The caller is over a rate limit; retry after the time given',
      status: 429,
      code: 'rate_limited',
      detail: 'Over the rate limit (default); retry after the time given.',
      instance: '/notes',
      'violated-policies': ['default'],
    });
    expect(JSON.parse(raw.text).instance).toBe('/notes');
    // Logged as every request is, under its request id.
    const logged = lines.map((l) => JSON.parse(l)).find((l) => l.reqId === 'door-1');
    expect(logged).toMatchObject({ msg: 'request', method: 'POST', path: '/notes', status: 429 });
  });

  it("refuses a route's own policy on that route only, HEAD counting as its GET", async () => {
    clock.advance(60_000);
    const created = await call(s.url, 'POST', '/notes', { json: { text: 'a' } });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const first = await call(s.url, 'HEAD', `/notes/${id}`);
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit')).toBe('"default";r=1;t=40, "Note.get";r=0;t=60');
    const second = await call(s.url, 'GET', `/notes/${id}`);
    expect(second.status).toBe(429);
    expect(second.body['violated-policies']).toEqual(['Note.get']);
    expect(second.headers.get('ratelimit-policy')).toBe('"default";q=3;w=60, "Note.get";q=1;w=60');
    // The general policy took nothing for the refusal: the list still has its last request.
    const list = await call(s.url, 'GET', '/notes');
    expect(list.status).toBe(200);
    expect(list.headers.get('ratelimit')).toBe('"default";r=0;t=60');
  });

  it('leaves a route that needs credentials to authentication: a 401 takes nothing from a rate', async () => {
    clock.advance(60_000);
    for (let i = 0; i < 5; i++) expect((await call(s.url, 'DELETE', '/notes/none')).status).toBe(401);
    const list = await call(s.url, 'GET', '/notes');
    expect(list.headers.get('ratelimit')).toBe('"default";r=2;t=20');
  });
});

describe('the front door and the client address', () => {
  it('counts by the address a trusted proxy saw, and by the socket without one', async () => {
    const clock = testClock(START);
    const trusting = await servePlan(
      planOf(spec('limits: { rate: { default: 1/min, by: ip }, trustProxy: [127.0.0.0/8] }')),
      { now: clock.now },
    );
    const plain = await servePlan(planOf(spec('limits: { rate: { default: 1/min, by: ip } }')), { now: clock.now });
    try {
      const from = (s: Served, address: string) =>
        call(s.url, 'GET', '/notes', { headers: { 'x-forwarded-for': address } });
      expect((await from(trusting, '198.51.100.1')).status).toBe(200);
      expect((await from(trusting, '198.51.100.2')).status).toBe(200);
      expect((await from(trusting, '198.51.100.1')).status).toBe(429);
      expect((await from(plain, '198.51.100.1')).status).toBe(200);
      expect((await from(plain, '198.51.100.2')).status).toBe(429);
    } finally {
      await trusting.close({ remove: true });
      await plain.close({ remove: true });
    }
  });
});

describe('the front door with Redis counters', () => {
  it('counts each request once in Redis, shared by two instances', async () => {
    const clock = testClock(START);
    const plan = planOf(spec('limits: { rate: { default: 4/min, by: ip } }'));
    const redisPrefix = `nf-test:${randomUUID()}:`;
    const a = await servePlan(plan, { now: clock.now, redisUrl: SHARED_REDIS_URL, redisPrefix });
    const b = await servePlan(plan, { now: clock.now, redisUrl: SHARED_REDIS_URL, redisPrefix });
    try {
      const answers = [];
      for (const s of [a, b, a, b, a]) answers.push(await call(s.url, 'GET', '/notes'));
      expect(answers.map((x) => x.status)).toEqual([200, 200, 200, 200, 429]);
      expect(answers.map((x) => x.headers.get('ratelimit'))).toEqual([
        '"default";r=3;t=15',
        '"default";r=2;t=30',
        '"default";r=1;t=45',
        '"default";r=0;t=60',
        '"default";r=0;t=60',
      ]);
      expect(answers[4]?.body.code).toBe('rate_limited');
    } finally {
      await a.close({ remove: true });
      await b.close({ remove: true });
    }
  });
});
