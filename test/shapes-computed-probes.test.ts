import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../src/parts/auth/keys.ts';
import { call, planOf, type Served, servePlan } from './helpers/serve-spec.ts';

// A count and an `exists` over the same records for the caller: where a unique index allows one such record at most,
// the count is the exists' hit (one probe per row); where nothing does, a caller's records are counted one by one.
const SPEC = `
ninefold: 1
service: { name: probes-test }
resources:
  Repo:
    fields:
      name: { type: string, required: true }
    computed:
      starred: { type: boolean, cel: "exists(Star, s, s.repo == record.id && s.user == caller)" }
      myStars: { type: integer, cel: "count(Star, s, s.repo == record.id && s.user == caller)" }
      starsByOthers: { type: integer, cel: "count(Star, s, s.repo == record.id && s.user != caller)" }
      watching: { type: boolean, cel: "exists(Watch, w, w.user == caller && w.repo == record.id)" }
      myWatches: { type: integer, cel: "count(Watch, w, w.repo == record.id && w.user == caller)" }
      watchersBesidesMe: { type: integer, cel: "count(Watch, w, w.repo == record.id && w.user != caller)" }
  Star:
    fields:
      repo: { type: ref, to: Repo, required: true }
      user: { type: string, required: true }
  Watch:
    fields:
      repo: { type: ref, to: Repo, required: true }
      user: { type: string, required: true }
    indexes: [{ fields: [repo, user], unique: true }]
auth:
  schemes: { key: { type: apiKey, in: header, name: X-Api-Key } }
  require: [key]
endpoints:
  Repo: { operations: [create, get, list] }
  Star: { operations: [create] }
  Watch: { operations: [create] }
`;

describe('a count and an exists over the same records', () => {
  let s: Served;
  const as: Record<string, Record<string, string>> = {};
  const repos: string[] = [];
  beforeAll(async () => {
    s = await servePlan(planOf(SPEC));
    for (const user of ['ann', 'bob'])
      as[user] = { 'x-api-key': (await issueApiKey(s.store, { subject: user, roles: [] })).key };
    const post = async (path: string, json: unknown) => {
      const r = await call(s.url, 'POST', path, { json, headers: as.ann });
      expect(r.status, r.text).toBe(201);
      return (r.body as { id: string }).id;
    };
    for (const name of ['first', 'second']) repos.push(await post('/repos', { name }));
    // Nothing keeps a user from starring a repo twice; a second watch of one repo by one user is refused.
    for (const user of ['ann', 'ann', 'bob']) await post('/stars', { repo: repos[0], user });
    for (const user of ['ann', 'bob']) await post('/watches', { repo: repos[0], user });
    const again = await call(s.url, 'POST', '/watches', { json: { repo: repos[0], user: 'ann' }, headers: as.ann });
    expect(again.status).toBe(409);
  });
  afterAll(() => s?.close({ remove: true }));

  const expected = {
    ann: { starred: true, myStars: 2, starsByOthers: 1, watching: true, myWatches: 1, watchersBesidesMe: 1 },
    bob: { starred: true, myStars: 1, starsByOthers: 2, watching: true, myWatches: 1, watchersBesidesMe: 1 },
  };
  const none = { starred: false, myStars: 0, starsByOthers: 0, watching: false, myWatches: 0, watchersBesidesMe: 0 };

  it('answers each caller its own counts in a list and in a read', async () => {
    for (const caller of ['ann', 'bob'] as const) {
      const page = await call(s.url, 'GET', '/repos', { headers: as[caller] });
      expect(page.status).toBe(200);
      const data = (page.body as { data: Array<Record<string, unknown>> }).data;
      expect(data.map((r) => r.id)).toEqual(repos);
      expect(data[0]).toMatchObject(expected[caller]);
      expect(data[1]).toMatchObject(none);
      const one = await call(s.url, 'GET', `/repos/${repos[0]}`, { headers: as[caller] });
      expect(one.body).toMatchObject(expected[caller]);
    }
  });
});
