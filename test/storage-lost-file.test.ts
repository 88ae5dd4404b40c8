import { renameSync, rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { call, LEAKS, serveSpec } from './helpers/serve-spec.ts';

// The database file deleted (or replaced) under a running server: SQLite keeps writing to the unlinked inode, so
// without a check every write would answer 201 and vanish at the next start.
const SPEC = `
ninefold: 1
service: { name: lost, title: Lost, purpose: A database file deleted under a running server. }
resources:
  Note:
    fields: { title: { type: string, required: true } }
events: { auto: true }
endpoints:
  Note: { operations: [list, get, create, update] }
`;

const expectUnavailable = (answer: Awaited<ReturnType<typeof call>>) => {
  expect(answer.status).toBe(503);
  expect(answer.body.code).toBe('storage_unavailable');
  expect(answer.text).not.toMatch(LEAKS);
};
/** A refused write also says when to come back (/readyz, answered by the runtime's own route, does not yet). */
const expectWriteUnavailable = (answer: Awaited<ReturnType<typeof call>>) => {
  expectUnavailable(answer);
  expect(answer.headers.get('retry-after')).toBeTruthy();
};

describe('the database file is deleted under a running server', () => {
  it('writes answer 503 storage_unavailable, /readyz answers 503, and nothing is acknowledged after', async () => {
    const served = await serveSpec(SPEC);
    const before = await call(served.url, 'POST', '/notes', { json: { title: 'before' } });
    expect(before.status).toBe(201);
    expect((await call(served.url, 'GET', '/readyz')).status).toBe(200);

    rmSync(served.dbPath);
    expectWriteUnavailable(await call(served.url, 'POST', '/notes', { json: { title: 'after' } }));
    expectWriteUnavailable(await call(served.url, 'PATCH', `/notes/${before.body.id}`, { json: { title: 'changed' } }));
    expectUnavailable(await call(served.url, 'GET', '/readyz'));
    await served.close();

    // A new file at the same path: nothing written after the deletion was ever acknowledged, so nothing is missing.
    const again = await serveSpec(SPEC, { dbPath: served.dbPath });
    expect((await call(again.url, 'GET', '/notes')).body.data).toEqual([]);
    expect((await call(again.url, 'GET', '/readyz')).status).toBe(200);
    await again.close({ remove: true });
  });

  it('under a burst of concurrent writes, no write that starts after the deletion answers 201', async () => {
    const served = await serveSpec(SPEC);
    let deleted = false;
    let acknowledgedAfter = 0;
    let refused = 0;
    let before = 0;
    const writer = async (w: number) => {
      for (let i = 0; i < 60; i++) {
        const startedAfter = deleted;
        const r = await call(served.url, 'POST', '/notes', { json: { title: `w${w}-${i}` } });
        if (r.status === 201 && startedAfter) acknowledgedAfter++;
        else if (r.status === 201) before++;
        else if (r.status === 503) refused++;
        else throw new Error(`unexpected ${r.status}: ${r.text}`);
        if (before >= 40 && !deleted) {
          rmSync(served.dbPath);
          deleted = true;
        }
      }
    };
    await Promise.all([0, 1, 2, 3, 4, 5, 6, 7].map(writer));
    expect(deleted).toBe(true);
    expect(acknowledgedAfter).toBe(0);
    expect(refused).toBeGreaterThan(0);
    await served.close({ remove: true });
  });

  it('a file put in its place is not the database the server opened: writes answer 503', async () => {
    const served = await serveSpec(SPEC);
    expect((await call(served.url, 'POST', '/notes', { json: { title: 'one' } })).status).toBe(201);
    const other = await serveSpec(SPEC);
    await other.close();
    renameSync(other.dbPath, served.dbPath);
    expectWriteUnavailable(await call(served.url, 'POST', '/notes', { json: { title: 'two' } }));
    expectUnavailable(await call(served.url, 'GET', '/readyz'));
    await served.close({ remove: true });
    rmSync(other.dbPath, { force: true });
  });
});
