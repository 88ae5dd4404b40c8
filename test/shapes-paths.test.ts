import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../src/parts/auth/keys.ts';
import { SqliteStore, StoreError } from '../src/storage/index.ts';
import { PostgresStore } from '../src/storage/postgres/postgres-store.ts';
import { call, ON_POSTGRES, planOf, type Served, serveSpec } from './helpers/serve-spec.ts';

/** A slice of GitHub's and RealWorld's path conventions: natural keys, nested keys, the caller's own record. */
const SPEC = readFileSync('test/fixtures/paths/service.yaml', 'utf8');

let s: Served;
let octo: Record<string, string>;
let userId = 0;

beforeAll(async () => {
  s = await serveSpec(SPEC);
  octo = { 'x-api-key': (await issueApiKey(s.store, { subject: 'octocat', roles: ['member'] })).key };
  const user = await call(s.url, 'POST', '/api/users', { json: { login: 'octocat', name: 'Mona' }, headers: octo });
  expect(user.status).toBe(201);
  userId = user.body.id;
});
afterAll(() => s.close({ remove: true }));

describe('natural keys', () => {
  it('serves an article by its slug: create, get, update, delete', async () => {
    const created = await call(s.url, 'POST', '/api/articles', {
      json: { slug: 'how-to', title: 'How' },
      headers: octo,
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe('/api/articles/how-to');
    expect(created.body).toMatchObject({ slug: 'how-to', title: 'How' });
    const got = await call(s.url, 'GET', '/api/articles/how-to', { headers: octo });
    expect(got.status).toBe(200);
    expect(got.body.id).toBe(created.body.id);
    const patched = await call(s.url, 'PATCH', '/api/articles/how-to', { json: { title: 'How to' }, headers: octo });
    expect(patched.body.title).toBe('How to');
    const published = await call(s.url, 'POST', '/api/articles/how-to/publish', { headers: octo });
    expect(published.status, published.text).toBe(200);
    expect(published.body.status).toBe('published');
    const history = await call(s.url, 'GET', '/api/articles/how-to/history', { headers: octo });
    expect(history.body.data.map((h: { transition: string }) => h.transition)).toEqual(['publish']);
    expect((await call(s.url, 'POST', '/api/articles/nope/publish', { headers: octo })).status).toBe(404);
    expect((await call(s.url, 'DELETE', '/api/articles/how-to', { headers: octo })).status).toBe(204);
    expect((await call(s.url, 'GET', '/api/articles/how-to', { headers: octo })).status).toBe(404);
  });

  it('answers an unknown key exactly as a missing id, but for the words naming it', async () => {
    const byKey = await call(s.url, 'GET', '/api/articles/nope', { headers: octo });
    expect(byKey.status).toBe(404);
    const byId = await call(s.url, 'GET', '/api/notes/01JD7X3K9Q2M4N6P8R0S2T4V6W', { headers: octo });
    expect(byId.status).toBe(404);
    expect(byKey.headers.get('content-type')).toBe(byId.headers.get('content-type'));
    expect(Object.keys(byKey.body)).toEqual(Object.keys(byId.body));
    expect({ ...byKey.body, detail: '', instance: '' }).toEqual({ ...byId.body, detail: '', instance: '' });
    expect(byKey.body.detail).toBe('No Article with slug nope.');
  });

  it('serves a user by login at its own path, integer ids on the wire', async () => {
    const got = await call(s.url, 'GET', '/api/users/octocat', { headers: octo });
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ id: userId, login: 'octocat' });
    expect(typeof got.body.id).toBe('number');
    expect((await call(s.url, 'GET', '/api/users/ghost', { headers: octo })).status).toBe(404);
  });
});

describe('the caller’s own record', () => {
  it('reads and updates the record whose key is the caller', async () => {
    const me = await call(s.url, 'GET', '/api/user', { headers: octo });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ id: userId, login: 'octocat' });
    const changed = await call(s.url, 'PATCH', '/api/user', { json: { name: 'Mona Lisa' }, headers: octo });
    expect(changed.status).toBe(200);
    expect(changed.body.name).toBe('Mona Lisa');
  });

  it('is 404 for a caller with no record', async () => {
    const stranger = { 'x-api-key': (await issueApiKey(s.store, { subject: 'stranger', roles: ['member'] })).key };
    const r = await call(s.url, 'GET', '/api/user', { headers: stranger });
    expect(r.status).toBe(404);
    expect(r.body.code).toBe('not_found');
  });
});

describe('compound and nested keys', () => {
  it('serves a repo at /repos/{owner}/{repo}, the owner by login; PUT updates with merge semantics', async () => {
    const created = await call(s.url, 'POST', '/api/repos', { json: { owner: userId, name: 'hello' }, headers: octo });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ owner: userId, name: 'hello' });
    expect(created.headers.get('location')).toBe('/api/repos/octocat/hello');
    const got = await call(s.url, 'GET', '/api/repos/octocat/hello', { headers: octo });
    expect(got.body.id).toBe(created.body.id);
    const put = await call(s.url, 'PUT', '/api/repos/octocat/hello', { json: { description: 'Hi' }, headers: octo });
    expect(put.status, put.text).toBe(200);
    expect(put.body).toMatchObject({ name: 'hello', description: 'Hi' });
    expect((await call(s.url, 'PATCH', '/api/repos/octocat/hello', { json: {}, headers: octo })).status).toBe(405);
    const twice = await call(s.url, 'POST', '/api/repos', { json: { owner: userId, name: 'hello' }, headers: octo });
    expect(twice.status).toBe(409);
  });

  it('is 404 for an unknown owner or repo, alike in shape', async () => {
    const owner = await call(s.url, 'GET', '/api/repos/ghost/hello', { headers: octo });
    const repo = await call(s.url, 'GET', '/api/repos/octocat/ghost', { headers: octo });
    expect([owner.status, repo.status]).toEqual([404, 404]);
    expect(Object.keys(owner.body)).toEqual(Object.keys(repo.body));
    expect(owner.body.code).toBe('not_found');
  });

  it('numbers issues per repo, concurrent creates included, and serves them by number', async () => {
    await call(s.url, 'POST', '/api/repos', { json: { owner: userId, name: 'busy' }, headers: octo });
    const both = await Promise.all(
      ['one', 'two'].map((title) =>
        call(s.url, 'POST', '/api/repos/octocat/busy/issues', { json: { title }, headers: octo }),
      ),
    );
    expect(both.map((r) => r.status)).toEqual([201, 201]);
    expect(both.map((r) => r.body.number).sort()).toEqual([1, 2]);
    const first = both.find((r) => r.body.number === 1);
    expect(first?.headers.get('location')).toBe('/api/repos/octocat/busy/issues/1');
    expect(first?.body.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const other = await call(s.url, 'POST', '/api/repos/octocat/hello/issues', { json: { title: 'x' }, headers: octo });
    expect(other.body.number).toBe(1);

    const got = await call(s.url, 'GET', '/api/repos/octocat/busy/issues/2', { headers: octo });
    expect(got.status).toBe(200);
    expect(got.body.number).toBe(2);
    const list = await call(s.url, 'GET', '/api/repos/octocat/busy/issues', { headers: octo });
    expect(list.body.data.map((i: { number: number }) => i.number).sort()).toEqual([1, 2]);
    for (const missing of ['/3', '/x', '/1.5']) {
      const r = await call(s.url, 'GET', `/api/repos/octocat/busy/issues${missing}`, { headers: octo });
      expect(r.status, missing).toBe(404);
    }
    expect((await call(s.url, 'GET', '/api/repos/octocat/nope/issues', { headers: octo })).status).toBe(404);
    const patched = await call(s.url, 'PATCH', '/api/repos/octocat/busy/issues/1', {
      json: { title: 'uno' },
      headers: octo,
    });
    expect(patched.body, patched.text).toMatchObject({ number: 1, title: 'uno' });
    expect((await call(s.url, 'DELETE', '/api/repos/octocat/busy/issues/1', { headers: octo })).status).toBe(204);
  });
});

describe('id styles', () => {
  it('mints integer ids 1, 2, 3 and answers a non-numeric id with 404', async () => {
    const second = await call(s.url, 'POST', '/api/users', { json: { login: 'hubot' }, headers: octo });
    expect(second.body.id).toBe(userId + 1);
    expect(second.headers.get('location')).toBe('/api/users/hubot');
  });

  it('pages integer ids in numeric order with cursors (10 after 9)', async () => {
    for (let i = 0; i < 10; i++)
      await call(s.url, 'POST', '/api/users', { json: { login: `user${i}` }, headers: octo });
    const seen: number[] = [];
    let next = '/api/users?limit=4';
    for (let pages = 0; next && pages < 10; pages++) {
      const page = await call(s.url, 'GET', next, { headers: octo });
      seen.push(...page.body.data.map((u: { id: number }) => u.id));
      next = page.body.nextCursor ? `/api/users?limit=4&cursor=${encodeURIComponent(page.body.nextCursor)}` : '';
    }
    expect(seen).toEqual(Array.from({ length: 12 }, (_, i) => userId + i));
    const desc = await call(s.url, 'GET', '/api/users?sort=-createdAt&limit=3', { headers: octo });
    expect(desc.body.data.map((u: { id: number }) => u.id)).toEqual([userId + 11, userId + 10, userId + 9]);
    expect((await call(s.url, 'GET', '/api/users/user9', { headers: octo })).body.id).toBe(userId + 11);
  });

  it('takes references to integer ids as integers and refuses strings', async () => {
    const r = await call(s.url, 'POST', '/api/repos', { json: { owner: String(userId), name: 'x' }, headers: octo });
    expect(r.status).toBe(422);
    expect(r.body.errors).toEqual([{ pointer: '#/owner', code: 'invalid_type', message: 'must be integer' }]);
    const listed = await call(s.url, 'GET', `/api/repos?owner=${userId}&expand=owner`, { headers: octo });
    expect(listed.status).toBe(200);
    expect(listed.body.data[0].owner).toMatchObject({ id: userId, login: 'octocat' });
    const missing = await call(s.url, 'POST', '/api/repos', { json: { owner: 999, name: 'x' }, headers: octo });
    expect(missing.status).toBe(422);
    expect(missing.body.code).toBe('invalid_reference');
  });
});

describe('changing the id style of a stored resource', () => {
  it('is refused at start, on either store, naming the resource', async () => {
    const before = await serveSpec(
      'ninefold: 1\nservice: { name: n }\nresources:\n  Note: { fields: { text: { type: string } } }\n',
    );
    await before.close();
    const store = ON_POSTGRES ? new PostgresStore({ url: before.dbPath }) : new SqliteStore({ path: before.dbPath });
    const plan = planOf(
      'ninefold: 1\nservice: { name: n }\nresources:\n  Note: { id: integer, fields: { text: { type: string } } }\n',
    );
    const error = await store.migrate(plan).catch((e: unknown) => e);
    await store.close();
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).kind).toBe('migration-refused');
    expect((error as StoreError).message).toContain("Note's id style changed to integer");
  });
});
