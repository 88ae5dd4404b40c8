import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, freshDatabase, type Served, serveSpec } from './helpers/serve-spec.ts';

/** Three versions, two renames between the oldest and the newest, and one change of every other kind. */
const SPEC = `
ninefold: 1
service: { name: book, title: Book, purpose: Every kind of change between versions. }
resources:
  Contact:
    fields:
      displayName: { type: string, required: true, maxLength: 40 }
      email: { type: string }
      age: { type: integer, min: 0 }
  Note:
    fields:
      contact: { type: ref, to: Contact, required: true }
      text: { type: string }
endpoints:
  Contact: { path: /contacts, list: { filter: [displayName], sort: [displayName] } }
  Note: { path: /notes, list: { expand: [contact] } }
versioning:
  scheme: header
  versions:
    - id: v1
    - id: v2
      changes:
        - { resource: Contact, rename: { from: name, to: fullName } }
        - { resource: Contact, add: email }
        - { resource: Contact, remove: nickname, default: "" }
        - { resource: Contact, retype: { field: age, from: { type: string } } }
    - id: v3
      changes: [{ resource: Contact, rename: { from: fullName, to: displayName } }]
`;

const V1 = { 'api-version': 'v1' };
const V2 = { 'api-version': 'v2' };

describe('versioning: changes between versions', () => {
  let served: Served;
  let id: string;
  beforeAll(async () => {
    served = await serveSpec(SPEC, { dbPath: freshDatabase() });
    const created = await call(served.url, 'POST', '/contacts', {
      json: { name: 'Ada', nickname: 'ad', age: '36' },
      headers: V1,
    });
    expect(created.status).toBe(201);
    id = created.body.id;
  });
  afterAll(() => served?.close({ remove: true }));

  it('rename (twice), remove and retype: written in the oldest, read in the newest and back', async () => {
    const newest = await call(served.url, 'GET', `/contacts/${id}`);
    expect(newest.body).toMatchObject({ displayName: 'Ada', age: 36 });
    expect(Object.keys(newest.body)).not.toContain('name');
    expect(Object.keys(newest.body)).not.toContain('nickname');
    const middle = await call(served.url, 'GET', `/contacts/${id}`, { headers: V2 });
    expect(middle.body).toMatchObject({ fullName: 'Ada', age: 36 });
    expect(Object.keys(middle.body)).not.toContain('displayName');
    const oldest = await call(served.url, 'GET', `/contacts/${id}`, { headers: V1 });
    expect(oldest.body).toMatchObject({ id, name: 'Ada', nickname: '', age: '36' });
    for (const key of ['displayName', 'fullName', 'email']) expect(Object.keys(oldest.body)).not.toContain(key);
  });

  it('add: a field the old version lacks is 422 unknown_field there, and nothing is stored', async () => {
    const before = await served.countRows('contact');
    const answer = await call(served.url, 'POST', '/contacts', { json: { name: 'Bo', email: 'b@x' }, headers: V1 });
    expect(answer.status).toBe(422);
    expect(answer.body.code).toBe('unknown_field');
    expect(answer.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual(['#/email']);
    // The newest name is not a name of the old version either.
    const newer = await call(served.url, 'POST', '/contacts', { json: { displayName: 'Bo' }, headers: V1 });
    expect(newer.status).toBe(422);
    // Pointed at as sent, not translated back into an old name the caller did not send.
    expect(newer.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual(['#/displayName']);
    expect(await served.countRows('contact')).toBe(before);
    const fine = await call(served.url, 'POST', '/contacts', { json: { fullName: 'Bo', email: 'b@x' }, headers: V2 });
    expect(fine.status).toBe(201);
    expect(fine.body).toMatchObject({ fullName: 'Bo', email: 'b@x' });
  });

  it('validation errors in the old version point at the old names', async () => {
    const missing = await call(served.url, 'POST', '/contacts', { json: {}, headers: V1 });
    expect(missing.status).toBe(422);
    expect(missing.body.errors[0].pointer).toBe('#/name');
    expect(missing.body.errors[0].message).not.toMatch(/displayName|fullName/);
    const long = await call(served.url, 'POST', '/contacts', { json: { name: 'x'.repeat(41) }, headers: V1 });
    expect(long.body.errors[0].pointer).toBe('#/name');
    const retyped = await call(served.url, 'POST', '/contacts', { json: { name: 'C', age: 'old' }, headers: V1 });
    expect(retyped.status).toBe(422);
    expect(retyped.body.errors[0].pointer).toBe('#/age');
  });

  it('an update in the old version changes the record the newest reads', async () => {
    const patched = await call(served.url, 'PATCH', `/contacts/${id}`, { json: { name: 'Ada L' }, headers: V1 });
    expect(patched.status).toBe(200);
    expect(patched.body.name).toBe('Ada L');
    expect((await call(served.url, 'GET', `/contacts/${id}`)).body.displayName).toBe('Ada L');
  });

  it('filters, sorts and lists speak the old version', async () => {
    const filtered = await call(served.url, 'GET', '/contacts?name=Ada%20L&sort=-name', { headers: V1 });
    expect(filtered.status).toBe(200);
    expect(filtered.body.data.map((c: { id: string }) => c.id)).toEqual([id]);
    expect(filtered.body.data[0].name).toBe('Ada L');
    const sorted = await call(served.url, 'GET', '/contacts?sort=name', { headers: V1 });
    expect(sorted.body.data.map((c: { name: string }) => c.name)).toEqual(['Ada L', 'Bo']);
  });

  it('an expanded reference is shown in the caller version too', async () => {
    const note = await call(served.url, 'POST', '/notes', { json: { contact: id, text: 'hi' }, headers: V1 });
    expect(note.status).toBe(201);
    const list = await call(served.url, 'GET', '/notes?expand=contact', { headers: V1 });
    expect(list.body.data[0].contact).toMatchObject({ id, name: 'Ada L' });
    expect(Object.keys(list.body.data[0].contact)).not.toContain('displayName');
    const newest = await call(served.url, 'GET', '/notes?expand=contact');
    expect(newest.body.data[0].contact).toMatchObject({ id, displayName: 'Ada L' });
  });
});
