import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../src/parts/auth/keys.ts';
import type { Plan } from '../src/plan/types.ts';
import { call, freshDatabase, planOf, type Served, servePlan } from './helpers/serve-spec.ts';
import { testClock } from './helpers/test-clock.ts';

const SPEC = `
ninefold: 1
service: { name: usage, title: Usage, purpose: Who calls which API version. }
resources:
  Note:
    fields:
      text: { type: string }
auth:
  schemes: { key: { type: apiKey, in: header, name: X-Api-Key } }
  require: [key]
  roles: { agent: Writes notes., admin: Runs the service. }
versioning:
  scheme: header
  versions:
    - id: v1
    - id: v2
      changes: [{ resource: Note, rename: { from: body, to: text } }]
`;

interface Caller {
  caller: string;
  count: number;
  lastSeen: string;
}
interface Usage {
  version: string;
  count: number;
  lastSeen: string | null;
  callers: Caller[];
}

const clock = testClock(new Date('2026-11-26T10:00:00Z'));
const plan: Plan = planOf(SPEC);
const db = freshDatabase();
const servers: Served[] = [];
let keys: Record<'ann' | 'bob' | 'root', Record<string, string>>;

const serve = async () => {
  const s = await servePlan(plan, { dbPath: db, now: clock.now });
  servers.push(s);
  return s;
};
const usage = async (s: Served, query = '') => {
  const r = await call(s.url, 'GET', `/_ninefold/versions/usage${query}`, { headers: { ...keys.root } });
  expect(r.status).toBe(200);
  return r.body as { since: string; data: Usage[] };
};
const of = (data: Usage[], version: string) => data.find((v) => v.version === version) as Usage;
const callerIn = (data: Usage[], version: string, caller: string) =>
  of(data, version).callers.find((c) => c.caller === caller);

beforeAll(async () => {
  const first = await serve();
  keys = {
    ann: { 'x-api-key': (await issueApiKey(first.store, { subject: 'ann', roles: ['agent'] })).key },
    // A key pinned to v1: its requests that name no version are served, and counted, in v1.
    bob: { 'x-api-key': (await issueApiKey(first.store, { subject: 'bob', roles: ['agent'], apiVersion: 'v1' })).key },
    root: { 'x-api-key': (await issueApiKey(first.store, { subject: 'root', roles: ['admin'] })).key },
  };
});
afterAll(async () => {
  for (const s of servers.slice(0, -1)) await s.close();
  await servers.at(-1)?.close({ remove: true });
});

describe('use of each API version per caller', () => {
  it('counts each caller’s requests per version, newest version first, with when it was last seen', async () => {
    const s = servers[0] as Served;
    for (let i = 0; i < 3; i++) {
      clock.advance(1000);
      expect((await call(s.url, 'GET', '/notes', { headers: { ...keys.ann, 'api-version': 'v1' } })).status).toBe(200);
    }
    await call(s.url, 'POST', '/notes', { json: { text: 'hi' }, headers: { ...keys.ann, 'api-version': 'v2' } });
    await call(s.url, 'GET', '/notes', { headers: keys.bob });
    const lastBob = clock.now().toISOString();
    // Refused after the version was known (a body the version does not take): still a use of the version.
    const refused = await call(s.url, 'POST', '/notes', { json: { text: 'x' }, headers: keys.bob });
    expect(refused.status).toBe(422);
    const { since, data } = await usage(s);
    expect(since).toBe('2026-10-28');
    expect(data.map((v) => v.version)).toEqual(['v2', 'v1']);
    expect(callerIn(data, 'v1', 'ann')).toEqual({ caller: 'ann', count: 3, lastSeen: '2026-11-26T10:00:03.000Z' });
    expect(callerIn(data, 'v1', 'bob')).toEqual({ caller: 'bob', count: 2, lastSeen: lastBob });
    expect(of(data, 'v1').count).toBe(5);
    expect(callerIn(data, 'v2', 'ann')?.count).toBe(1);
    // The admin's own reading is a request in the default version (v2) too.
    expect(callerIn(data, 'v2', 'root')?.count).toBe(1);
  });

  it('is for the admin role only, and says which days it covers', async () => {
    const s = servers[0] as Served;
    const agent = await call(s.url, 'GET', '/_ninefold/versions/usage', { headers: keys.ann });
    expect(agent.status).toBe(403);
    const anonymous = await call(s.url, 'GET', '/_ninefold/versions/usage');
    expect(anonymous.status).toBe(401);
    for (const days of ['0', '401', 'x', '1.5']) {
      const bad = await call(s.url, 'GET', `/_ninefold/versions/usage?days=${days}`, { headers: keys.root });
      expect(bad.status, days).toBe(400);
      expect(bad.body.code).toBe('invalid_query');
    }
  });

  it('is kept in the database: it outlives the process, and every process adds to the same counts', async () => {
    const first = servers[0] as Served;
    const second = await serve();
    // A request on each server, then the first one stops: it adds what it counted on its way out.
    await call(first.url, 'GET', '/notes', { headers: { ...keys.ann, 'api-version': 'v1' } });
    await call(second.url, 'GET', '/notes', { headers: { ...keys.ann, 'api-version': 'v1' } });
    await first.close();
    servers.splice(servers.indexOf(first), 1);
    const { data } = await usage(second);
    expect(callerIn(data, 'v1', 'ann')?.count).toBe(5);
    expect(callerIn(data, 'v1', 'bob')?.count).toBe(2);
  });

  it('counts per UTC day: days=1 shows today only', async () => {
    const s = servers.at(-1) as Served;
    clock.advance(24 * 60 * 60 * 1000);
    await call(s.url, 'GET', '/notes', { headers: { ...keys.bob } });
    const today = await usage(s, '?days=1');
    expect(today.since).toBe('2026-11-27');
    expect(callerIn(today.data, 'v1', 'bob')?.count).toBe(1);
    expect(callerIn(today.data, 'v1', 'ann')).toBeUndefined();
    const both = await usage(s, '?days=2');
    expect(callerIn(both.data, 'v1', 'bob')?.count).toBe(3);
    expect(callerIn(both.data, 'v1', 'ann')?.count).toBe(5);
  });
});
