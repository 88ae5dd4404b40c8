import { afterEach, describe, expect, it } from 'vitest';
import { call, freshDatabase, planOf, type Served, servePlan } from './helpers/serve-spec.ts';

// Counts that need no caller are kept by the database (a column that triggers keep up to date), on both stores:
// every write path moves them, an existing database is backfilled, and a changed definition is counted again.
const spec = (counts: string) => `
ninefold: 1
service: { name: tallies-test }
resources:
  Repo:
    fields:
      name: { type: string, required: true }
    computed:
${counts}
  Issue:
    fields:
      title: { type: string, required: true }
      repo: { type: ref, to: Repo, required: true, onDelete: cascade }
      status: { type: enum, values: [open, closed], default: open }
      pinned: { type: boolean, default: false }
  Star:
    fields:
      repo: { type: ref, to: Repo, required: true, onDelete: cascade }
      user: { type: string, required: true }
endpoints:
  Repo: { operations: [create, get, list, delete] }
  Issue: { operations: [create, get, update, delete] }
  Star: { operations: [create, delete] }
`;
const COUNTS = `      issuesCount: { type: integer, cel: "count(Issue, i, i.repo == record.id)" }
      openCount: { type: integer, cel: "count(Issue, i, i.repo == record.id && i.status == 'open')" }
      pinnedOpen: { type: integer, cel: "count(Issue, i, record.id == i.repo && i.pinned == true && i.status != 'closed')" }`;

describe('counts kept by the database (tallies)', () => {
  const served: Served[] = [];
  const serve = async (counts: string, dbPath = freshDatabase()) => {
    const s = await servePlan(planOf(spec(counts)), { dbPath });
    served.push(s);
    return s;
  };
  afterEach(async () => {
    for (const s of served.splice(0)) await s.close({ remove: true }).catch(() => undefined);
  });
  const counts = async (s: Served, id: string) => {
    const r = await call(s.url, 'GET', `/repos/${id}`);
    expect(r.status).toBe(200);
    const b = r.body as Record<string, unknown>;
    return [b.issuesCount, b.openCount, b.pinnedOpen];
  };
  const create = async (s: Served, path: string, json: unknown) => {
    const r = await call(s.url, 'POST', path, { json });
    expect(r.status, r.text).toBe(201);
    return r.body as { id: string };
  };

  it('compiles a count that reads no caller to a tally, and one that does to a subquery', () => {
    const plan = planOf(
      spec(
        `${COUNTS}\n      starredByMe: { type: integer, cel: "count(Star, s, s.repo == record.id && s.user == caller)" }`,
      ),
    );
    const fields = plan.resourcesByName.get('Repo')?.computed ?? [];
    expect(fields.map((f) => [f.name, Boolean(f.tally)])).toEqual([
      ['issuesCount', true],
      ['openCount', true],
      ['pinnedOpen', true],
      ['starredByMe', false],
    ]);
  });

  it('compiles a count that leaves out the caller to a tally less one probe, on a field every record holds', () => {
    const plan = planOf(
      spec(
        `${COUNTS}\n      byOthers: { type: integer, cel: "count(Star, s, s.repo == record.id && s.user != caller)" }` +
          `\n      openByOthers: { type: integer, cel: "count(Issue, i, i.repo == record.id && i.status != caller)" }`,
      ),
    );
    const fields = new Map((plan.resourcesByName.get('Repo')?.computed ?? []).map((f) => [f.name, f.tally]));
    // Star.user is required: the tally of the repo's stars less the caller's; Issue.status may be missing.
    expect(fields.get('byOthers')).toMatchObject({ from: 'Star', via: 'repo', where: [], less: 'user' });
    expect(fields.get('openByOthers')).toBeUndefined();
  });

  it('follows creates, updates that move a record in or out, moves between parents, deletes and cascades', async () => {
    const s = await serve(COUNTS);
    const a = await create(s, '/repos', { name: 'a' });
    const b = await create(s, '/repos', { name: 'b' });
    expect(await counts(s, a.id)).toEqual([0, 0, 0]);
    const i1 = await create(s, '/issues', { title: 'one', repo: a.id });
    const i2 = await create(s, '/issues', { title: 'two', repo: a.id, pinned: true });
    await create(s, '/issues', { title: 'three', repo: b.id, status: 'closed' });
    expect(await counts(s, a.id)).toEqual([2, 2, 1]);
    expect(await counts(s, b.id)).toEqual([1, 0, 0]);

    expect((await call(s.url, 'PATCH', `/issues/${i2.id}`, { json: { status: 'closed' } })).status).toBe(200);
    expect(await counts(s, a.id)).toEqual([2, 1, 0]);
    expect((await call(s.url, 'PATCH', `/issues/${i2.id}`, { json: { title: 'renamed' } })).status).toBe(200);
    expect(await counts(s, a.id)).toEqual([2, 1, 0]);
    expect((await call(s.url, 'PATCH', `/issues/${i1.id}`, { json: { repo: b.id, pinned: true } })).status).toBe(200);
    expect(await counts(s, a.id)).toEqual([1, 0, 0]);
    expect(await counts(s, b.id)).toEqual([2, 1, 1]);

    expect((await call(s.url, 'DELETE', `/issues/${i1.id}`)).status).toBe(204);
    expect(await counts(s, b.id)).toEqual([1, 0, 0]);

    // A list answers the same numbers as a read, and the tally column is not a field of the record.
    const list = await call(s.url, 'GET', '/repos');
    const rows = (list.body as { data: Array<Record<string, unknown>> }).data;
    expect(rows.map((r) => [r.name, r.issuesCount, r.openCount])).toEqual([
      ['a', 1, 0],
      ['b', 1, 0],
    ]);
    expect(Object.keys(rows[0] ?? {}).some((k) => k.startsWith('nf_'))).toBe(false);

    // Deleting a repo cascades to its issues; the other repo's counts do not move.
    expect((await call(s.url, 'DELETE', `/repos/${a.id}`)).status).toBe(204);
    expect(await counts(s, b.id)).toEqual([1, 0, 0]);
  });

  it('a failed write moves no count', async () => {
    const s = await serve(COUNTS);
    const a = await create(s, '/repos', { name: 'a' });
    const bad = await call(s.url, 'POST', '/issues', { json: { title: 'x', repo: 'repo_nope' } });
    expect(bad.status).toBeGreaterThanOrEqual(400);
    const i = await create(s, '/issues', { title: 'x', repo: a.id });
    const moved = await call(s.url, 'PATCH', `/issues/${i.id}`, { json: { repo: 'repo_nope' } });
    expect(moved.status).toBeGreaterThanOrEqual(400);
    expect(await counts(s, a.id)).toEqual([1, 1, 0]);
  });

  it('counts the records of a database that had none of these fields, and again when a definition changes', async () => {
    const dbPath = freshDatabase();
    const first = await serve('      none: { type: integer, cel: "count(Star, s, s.repo == record.id)" }', dbPath);
    const a = await create(first, '/repos', { name: 'a' });
    await create(first, '/issues', { title: 'one', repo: a.id });
    await create(first, '/issues', { title: 'two', repo: a.id, status: 'closed', pinned: true });
    await create(first, '/issues', { title: 'three', repo: a.id, pinned: true });
    await first.close();
    served.splice(0);

    const second = await serve(COUNTS, dbPath);
    expect(await counts(second, a.id)).toEqual([3, 2, 1]);
    await second.close();
    served.splice(0);

    const changed = COUNTS.replace("i.status == 'open'", "i.status == 'closed'");
    const third = await serve(changed, dbPath);
    expect(await counts(third, a.id)).toEqual([3, 1, 1]);
    await create(third, '/issues', { title: 'four', repo: a.id, status: 'closed' });
    expect(await counts(third, a.id)).toEqual([4, 2, 1]);
  });
});
