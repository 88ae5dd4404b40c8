import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../src/parts/auth/keys.ts';
import { retrySpreadMs } from '../src/parts/limits/quota-step.ts';
import { call, freshDatabase, planOf, type Served, servePlan } from './helpers/serve-spec.ts';
import { testClock } from './helpers/test-clock.ts';

// Quotas of part 8 (L4, L5, L7): successful calls per caller per calendar day (UTC), counted in the database, so
// a restart keeps them and every process on the database counts together.
const SPEC = `
ninefold: 1
service: { name: quota-test }
resources:
  Note:
    fields: { text: { type: string, required: true, maxLength: 20 } }
auth:
  schemes: { key: { type: apiKey, in: header, name: X-Api-Key } }
  require: [key]
  roles: { writer: Writes. }
limits:
  quotas: { Note.create: 3/day }
`;

const QUOTA_TYPE = 'https://iana.org/assignments/http-problem-types#quota-exceeded';
// 18:00 UTC: the day ends in 6 hours.
const START = new Date('2026-03-02T18:00:00Z');
const MIDNIGHT = '2026-03-03T00:00:00.000Z';

describe('quotas', () => {
  const plan = planOf(SPEC);
  const clock = testClock(START);
  const dbPath = freshDatabase();
  let s: Served;
  let other: Served;
  let alice: string;
  let bob: string;
  let admin: string;
  beforeAll(async () => {
    s = await servePlan(plan, { dbPath, now: clock.now });
    other = await servePlan(plan, { dbPath, now: clock.now });
    alice = (await issueApiKey(s.store, { roles: ['writer'], subject: 'alice' })).key;
    bob = (await issueApiKey(s.store, { roles: ['writer'], subject: 'bob' })).key;
    admin = (await issueApiKey(s.store, { roles: ['admin'], subject: 'root' })).key;
  });
  afterAll(async () => {
    await other.close();
    await s.close({ remove: true });
  });

  const create = (on: Served, key: string, text = 'hello', headers: Record<string, string> = {}) =>
    call(on.url, 'POST', '/notes', { json: { text }, headers: { 'x-api-key': key, ...headers } });
  const usage = (key: string, query = '') =>
    call(s.url, 'GET', `/_ninefold/usage${query}`, { headers: { 'x-api-key': key } });

  it('counts only successful calls: refusals, invalid bodies and idempotent replays are free', async () => {
    expect((await create(s, alice, 'x'.repeat(21))).status).toBe(422);
    const first = await create(s, alice, 'one', { 'idempotency-key': 'k1' });
    expect(first.status).toBe(201);
    expect(first.headers.get('ratelimit-policy')).toBe('"Note.create";q=3;w=86400');
    expect(first.headers.get('ratelimit')).toBe('"Note.create";r=2;t=21600');
    const replay = await create(s, alice, 'one', { 'idempotency-key': 'k1' });
    expect(replay.status).toBe(201);
    expect(replay.body.id).toBe(first.body.id);
    const own = await usage(alice);
    expect(own.status).toBe(200);
    expect(own.body).toEqual({
      subject: 'alice',
      quotas: [
        {
          operation: 'Note.create',
          quota: '3 per day',
          limit: 3,
          used: 1,
          remaining: 2,
          periodStart: '2026-03-02T00:00:00.000Z',
          resetAt: MIDNIGHT,
        },
      ],
    });
  });

  it('is shared by every process on the database, and refuses 429 quota_exceeded with the reset time', async () => {
    expect((await create(other, alice)).status).toBe(201);
    expect((await create(s, alice)).status).toBe(201);
    const refused = await create(other, alice);
    expect(refused.status).toBe(429);
    // Six hours to midnight, and the caller's own part of a minute, so that callers do not all return at once (L4).
    expect(refused.headers.get('retry-after')).toBe(
      String(6 * 3600 + Math.ceil(retrySpreadMs('alice', 'Note.create', 86_400_000) / 1000)),
    );
    expect(refused.headers.get('ratelimit')).toBe('"Note.create";r=0;t=21600');
    expect(refused.body).toMatchObject({
      type: QUOTA_TYPE,
      code: 'quota_exceeded',
      status: 429,
      'violated-policies': ['Note.create'],
      resetAt: MIDNIGHT,
    });
    expect(await s.countRows('note')).toBe(3);
  });

  it('keeps other callers apart, and lets exactly the quota through when calls race', async () => {
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => create(i % 2 ? s : other, bob, `race ${i}`)));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(3);
    expect(answers.filter((a) => a.status === 429).every((a) => a.body.code === 'quota_exceeded')).toBe(true);
    expect(await s.countRows('note')).toBe(6);
  });

  it('spreads the callers it refused until midnight over a minute, each the same every time (L4)', async () => {
    const retry = async (key: string) => Number((await create(s, key)).headers.get('retry-after'));
    const [a, b] = [await retry(alice), await retry(bob)];
    for (const seconds of [a, b]) {
      expect(seconds).toBeGreaterThanOrEqual(6 * 3600);
      expect(seconds).toBeLessThanOrEqual(6 * 3600 + 60);
    }
    expect(a).not.toBe(b);
    expect(await retry(alice)).toBe(a);
  });

  it('survives a restart', async () => {
    await other.close();
    other = await servePlan(plan, { dbPath, now: clock.now });
    expect((await create(other, alice)).status).toBe(429);
  });

  it('shows a caller only its own usage; the admin role reads anyone’s and resets it', async () => {
    expect((await usage(bob, '?subject=alice')).status).toBe(403);
    const read = await usage(admin, '?subject=alice');
    expect(read.status).toBe(200);
    expect(read.body.quotas[0]).toMatchObject({ used: 3, remaining: 0 });
    const notAdmin = await call(s.url, 'DELETE', '/_ninefold/usage/alice', { headers: { 'x-api-key': bob } });
    expect(notAdmin.status).toBe(403);
    const reset = await call(s.url, 'DELETE', '/_ninefold/usage/alice', { headers: { 'x-api-key': admin } });
    expect(reset.status).toBe(204);
    expect((await usage(alice)).body.quotas[0]).toMatchObject({ used: 0, remaining: 3 });
    expect((await create(s, alice)).status).toBe(201);
  });

  it('starts again at midnight UTC', async () => {
    expect((await create(s, bob)).status).toBe(429);
    clock.advance(6 * 3600_000);
    const next = await create(s, bob);
    expect(next.status).toBe(201);
    expect(next.headers.get('ratelimit')).toBe('"Note.create";r=2;t=86400');
  });
});
