import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Plan } from '../src/plan/types.ts';
import { SHARED_REDIS_URL, startPrivateRedis } from './helpers/redis-server.ts';
import { call, planOf, type Served, servePlan } from './helpers/serve-spec.ts';
import { testClock } from './helpers/test-clock.ts';
import { waitFor } from './helpers/wait-for.ts';

// Rate limits shared by several instances through Redis (L1, L2, L6; RELIABILITY.md §2.5). Three servers in this
// process stand for three instances: each has its own Redis connection and counts only through Redis.
const spec = (limits: string) => `
ninefold: 1
service: { name: redis-rate-test }
resources:
  Note:
    fields: { text: { type: string, required: true } }
${limits}
`;
const START = new Date('2026-03-02T10:00:00Z');

/** Servers of one plan sharing one Redis under a prefix of this test's own, on one clock. */
const instances = async (plan: Plan, n: number, redisUrl: string, now: () => Date, logs?: string[]) => {
  const redisPrefix = `nf-test:${randomUUID()}:`;
  const served: Served[] = [];
  for (let i = 0; i < n; i++)
    served.push(
      await servePlan(plan, {
        now,
        redisUrl,
        redisPrefix,
        ...(logs ? { logLevel: 'info', logStream: { write: (line: string) => void logs.push(line) } } : {}),
      }),
    );
  return { served, redisPrefix, close: () => Promise.all(served.map((s) => s.close({ remove: true }))) };
};

describe('rate limits shared through Redis', () => {
  const redis = new Redis(SHARED_REDIS_URL);
  afterAll(() => redis.quit());

  it('let exactly q through across three instances when 3q requests arrive at once (L1)', async () => {
    const clock = testClock(START);
    const group = await instances(
      planOf(spec('limits: { rate: { default: 20/min, by: ip } }')),
      3,
      SHARED_REDIS_URL,
      clock.now,
    );
    try {
      const answers = await Promise.all(
        Array.from({ length: 60 }, (_, i) => call((group.served[i % 3] as Served).url, 'GET', '/notes')),
      );
      expect(answers.filter((a) => a.status === 200)).toHaveLength(20);
      const refused = answers.filter((a) => a.status === 429);
      expect(refused).toHaveLength(40);
      for (const r of refused) {
        expect(r.body.code).toBe('rate_limited');
        expect(r.headers.get('ratelimit')).toBe('"default";r=0;t=60');
        expect(r.headers.get('retry-after')).toBe('3');
      }
      // L2: every key this test wrote has a time to live.
      const keys = await redis.keys(`${group.redisPrefix}*`);
      expect(keys.length).toBeGreaterThan(0);
      for (const key of keys) expect(await redis.pttl(key)).toBeGreaterThan(0);
    } finally {
      await group.close();
    }
  });

  it('decides requests arriving together one after the other, as one round trip each would (two policies)', async () => {
    const clock = testClock(START);
    const group = await instances(
      planOf(spec("limits: { rate: { default: 4/min, by: ip, endpoints: { 'GET /notes': 6/min } } }")),
      1,
      SHARED_REDIS_URL,
      clock.now,
    );
    try {
      const url = (group.served[0] as Served).url;
      const answers = await Promise.all(Array.from({ length: 10 }, () => call(url, 'GET', '/notes')));
      const passed = answers.filter((a) => a.status === 200);
      expect(passed).toHaveLength(4);
      // Each request let through saw the state the ones before it left: remaining 3, 2, 1, 0 and 5, 4, 3, 2.
      expect(passed.map((a) => a.headers.get('ratelimit')).sort()).toEqual([
        '"default";r=0;t=60, "GET /notes";r=2;t=40',
        '"default";r=1;t=45, "GET /notes";r=3;t=30',
        '"default";r=2;t=30, "GET /notes";r=4;t=20',
        '"default";r=3;t=15, "GET /notes";r=5;t=10',
      ]);
      for (const r of answers.filter((a) => a.status === 429))
        expect(r.headers.get('ratelimit')).toBe('"default";r=0;t=60, "GET /notes";r=2;t=40');
      const keys = await redis.keys(`${group.redisPrefix}*`);
      expect(keys).toHaveLength(2);
      for (const key of keys) expect(await redis.pttl(key)).toBeGreaterThan(0);
    } finally {
      await group.close();
    }
  });

  it('accept within 5 % of the limit from three instances under 3x the limit for 30 s (virtual clock)', async () => {
    const clock = testClock(START);
    const group = await instances(
      planOf(spec('limits: { rate: { default: 10/s, by: ip } }')),
      3,
      SHARED_REDIS_URL,
      clock.now,
    );
    try {
      let accepted = 0;
      for (let i = 0; i < 900; i++) {
        const a = await call((group.served[i % 3] as Served).url, 'GET', '/notes');
        if (a.status === 200) accepted++;
        clock.advance(1000 / 30);
      }
      const limit = 10 * 30 + 10;
      expect(Math.abs(accepted - limit)).toBeLessThanOrEqual(limit * 0.05);
    } finally {
      await group.close();
    }
  });
});

describe('the failed-login limiter with Redis', () => {
  const LOGIN_SPEC = `
ninefold: 1
service: { name: login-test }
resources:
  User:
    fields:
      email: { type: string, required: true, unique: true, maxLength: 200 }
      password: { type: string, required: true, writeOnly: true, maxLength: 200 }
      roles: { type: array, maxItems: 4, items: { type: string, maxLength: 20 } }
auth:
  schemes: { basic: { type: basic, users: User, usernameField: email, passwordField: password, rolesField: roles } }
  require: [basic]
endpoints:
  User: { operations: [list] }
`;
  const redis = new Redis(SHARED_REDIS_URL);
  afterAll(() => redis.quit());

  it('counts failures across instances that share only Redis (each on a database of its own)', async () => {
    const clock = testClock(START);
    const group = await instances(planOf(LOGIN_SPEC), 2, SHARED_REDIS_URL, clock.now);
    const basic = `Basic ${Buffer.from('ghost@example.com:wrong').toString('base64')}`;
    const login = (i: number) =>
      call((group.served[i % 2] as Served).url, 'GET', '/users', { headers: { authorization: basic } });
    try {
      const statuses = [];
      for (let i = 0; i < 10; i++) statuses.push((await login(i)).status);
      expect(statuses).toEqual(Array(10).fill(401));
      const refused = await login(10);
      expect(refused.status).toBe(429);
      expect(refused.body.code).toBe('too_many_requests');
      expect((await login(11)).status).toBe(429);
      const keys = await redis.keys(`${group.redisPrefix}w:*`);
      expect(keys.length).toBeGreaterThan(0);
      for (const key of keys) expect(await redis.pttl(key)).toBeGreaterThan(0);
    } finally {
      await group.close();
    }
  });
});

describe('when Redis goes away', () => {
  let own: Awaited<ReturnType<typeof startPrivateRedis>>;
  beforeAll(async () => {
    own = await startPrivateRedis();
  });
  afterAll(() => own.stop());

  it('serves without limits (fail open) with one logged warning, no 5xx, and limits again once it is back (L6)', async () => {
    const clock = testClock(START);
    const logs: string[] = [];
    const group = await instances(
      planOf(spec('limits: { rate: { default: 5/min, by: ip } }')),
      2,
      own.url,
      clock.now,
      logs,
    );
    const get = (i: number) => call((group.served[i % 2] as Served).url, 'GET', '/notes');
    try {
      const before = await Promise.all(Array.from({ length: 10 }, (_, i) => get(i)));
      expect(before.filter((a) => a.status === 200)).toHaveLength(5);
      await own.kill();
      const during = await Promise.all(Array.from({ length: 20 }, (_, i) => get(i)));
      expect(during.map((a) => a.status)).toEqual(Array(20).fill(200));
      expect(during.every((a) => a.headers.get('ratelimit') === null)).toBe(true);
      const warnings = logs.filter((l) => l.includes('Redis failed'));
      // One warning per instance for the outage, not one per request.
      expect(warnings.length).toBeGreaterThan(0);
      expect(warnings.length).toBeLessThanOrEqual(2);
      // Under load: four clients keep calling while Redis is killed and started again.
      let loading = true;
      const statuses: number[] = [];
      const client = async (i: number) => {
        while (loading) statuses.push((await get(i)).status);
      };
      const load = Promise.all([0, 1, 2, 3].map(client));
      await waitFor(() => statuses.length >= 20, 'some requests under load');
      await own.restart();
      await waitFor(() => logs.filter((l) => l.includes('Redis is back')).length === 2, 'both instances to reconnect');
      await own.kill();
      const seen = statuses.length;
      await waitFor(() => statuses.length >= seen + 20, 'requests while Redis is down again');
      await own.restart();
      await waitFor(() => logs.filter((l) => l.includes('Redis is back')).length === 4, 'both instances to reconnect');
      loading = false;
      await load;
      expect(statuses.filter((c) => c >= 500)).toEqual([]);
      clock.advance(120_000);
      const after = await Promise.all(Array.from({ length: 10 }, (_, i) => get(i)));
      expect(after.filter((a) => a.status === 200)).toHaveLength(5);
      expect(after.filter((a) => a.status === 429)).toHaveLength(5);
    } finally {
      await group.close();
    }
  });

  it('refuses 503 limits_unavailable instead, with onStoreFailure: closed', async () => {
    const clock = testClock(START);
    const group = await instances(
      planOf(spec('limits: { rate: { default: 5/min, by: ip }, onStoreFailure: closed }')),
      1,
      own.url,
      clock.now,
    );
    const get = () => call((group.served[0] as Served).url, 'GET', '/notes');
    try {
      expect((await get()).status).toBe(200);
      await own.kill();
      const refused = await get();
      expect(refused.status).toBe(503);
      expect(refused.body.code).toBe('limits_unavailable');
      expect(refused.headers.get('retry-after')).toBe('1');
      await own.restart();
      await waitFor(async () => (await get()).status === 200, 'the instance to reconnect');
    } finally {
      await group.close();
    }
  });
});
