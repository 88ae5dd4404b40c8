import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../src/parts/auth/keys.ts';
import type { Store } from '../src/storage/index.ts';
import { call, planOf, type Served, servePlan } from './helpers/serve-spec.ts';

const SPEC = `
ninefold: 1
service: { name: views-test }
resources:
  User:
    fields:
      username: { type: string, required: true, unique: true }
      email: { type: string, format: email, required: true }
      bio: { type: string }
    views:
      Profile:
        fields: [username, bio]
        computed:
          following: { type: boolean, cel: "exists(Follow, f, f.follower == caller && f.followee == record.id)" }
  Article:
    fields:
      title: { type: string, required: true }
      author: { type: ref, to: User, view: Profile }
    computed:
      favorited: { type: boolean, cel: "exists(Favorite, f, f.user == caller && f.article == record.id)" }
      favoritesCount: { type: integer, cel: "count(Favorite, f, f.article == record.id)" }
      byOthers: { type: integer, cel: "count(Favorite, f, f.article == record.id && f.user != caller)" }
  Favorite:
    fields:
      user: { type: ref, to: User, required: true }
      article: { type: ref, to: Article, required: true, onDelete: cascade }
    indexes: [{ fields: [user, article], unique: true }]
  Follow:
    fields:
      follower: { type: ref, to: User, required: true }
      followee: { type: ref, to: User, required: true }
auth:
  schemes: { key: { type: apiKey, in: header, name: X-Api-Key } }
  require: [key]
endpoints:
  User:
    overrides:
      get: { view: Profile, require: public }
  Article:
    list: { pageSize: { default: 20, max: 100 } }
    overrides:
      list: { require: public }
      get: { require: public }
  Favorite: { operations: [create, delete] }
  Follow: { operations: [create] }
events:
  auto: true
`;

const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ??
  addFormatsModule) as unknown as (ajv: Ajv2020) => Ajv2020;

/** Counts the store's reads, to show that a page costs one query. */
const counting =
  (counts: { reads: number }) =>
  (store: Store): Store =>
    new Proxy(store, {
      get(target, name) {
        const value = Reflect.get(target, name);
        if (typeof value !== 'function') return value;
        if (name === 'list' || name === 'get' || name === 'getMany')
          return (...args: unknown[]) => {
            counts.reads++;
            return value.apply(target, args);
          };
        return value.bind(target);
      },
    });

describe('views and computed fields', () => {
  let s: Served;
  const counts = { reads: 0 };
  const as: Record<string, Record<string, string>> = {};
  const users: Record<string, string> = {};
  const articles: string[] = [];

  beforeAll(async () => {
    s = await servePlan(planOf(SPEC), { store: counting(counts) });
    const root = { 'x-api-key': (await issueApiKey(s.store, { subject: 'root', roles: [] })).key };
    for (const name of ['ann', 'bob', 'cy']) {
      const made = await call(s.url, 'POST', '/users', {
        json: { username: name, email: `${name}@example.com`, bio: `I am ${name}` },
        headers: root,
      });
      expect(made.status).toBe(201);
      const id = (made.body as { id: string }).id;
      users[name] = id;
      as[name] = { 'x-api-key': (await issueApiKey(s.store, { subject: id, roles: [] })).key };
    }
    for (let i = 0; i < 22; i++) {
      const made = await call(s.url, 'POST', '/articles', {
        json: { title: `article ${i}`, author: users.ann },
        headers: as.ann,
      });
      articles.push((made.body as { id: string }).id);
    }
    // bob favourites articles 0..9; cy favourites the even ones; bob follows ann.
    for (let i = 0; i < 10; i++)
      expect(
        (await call(s.url, 'POST', '/favorites', { json: { user: users.bob, article: articles[i] }, headers: as.bob }))
          .status,
      ).toBe(201);
    for (let i = 0; i < 22; i += 2)
      await call(s.url, 'POST', '/favorites', { json: { user: users.cy, article: articles[i] }, headers: as.cy });
    await call(s.url, 'POST', '/follows', { json: { follower: users.bob, followee: users.ann }, headers: as.bob });
  });
  afterAll(() => s?.close({ remove: true }));

  const expected = (i: number, caller: 'bob' | 'cy' | 'anon') => {
    const favorited = caller === 'bob' ? i < 10 : caller === 'cy' ? i % 2 === 0 : false;
    const favoritesCount = (i < 10 ? 1 : 0) + (i % 2 === 0 ? 1 : 0);
    // The favourites by others: the tally less the caller's own; an anonymous caller's `!=` never holds.
    return { favorited, favoritesCount, byOthers: caller === 'anon' ? 0 : favoritesCount - (favorited ? 1 : 0) };
  };

  it('answers a page of 20 with per-caller fields, in one query', async () => {
    for (const caller of ['bob', 'cy', 'anon'] as const) {
      counts.reads = 0;
      const page = await call(s.url, 'GET', '/articles', caller === 'anon' ? {} : { headers: as[caller] });
      expect(page.status).toBe(200);
      expect(counts.reads).toBe(1);
      const data = (
        page.body as { data: Array<{ id: string; favorited: boolean; favoritesCount: number; byOthers: number }> }
      ).data;
      expect(data).toHaveLength(20);
      for (const record of data) {
        const i = articles.indexOf(record.id);
        const { favorited, favoritesCount, byOthers } = record;
        expect({ favorited, favoritesCount, byOthers }).toEqual(expected(i, caller));
      }
    }
  });

  it('answers GET, create and update with the computed fields, and refuses them on write', async () => {
    const id = articles[4] as string;
    counts.reads = 0;
    const got = await call(s.url, 'GET', `/articles/${id}`, { headers: as.bob });
    expect(got.body).toMatchObject({ id, favorited: true, favoritesCount: 2 });
    expect(counts.reads).toBe(1); // the record and its computed fields in one query
    const anon = await call(s.url, 'GET', `/articles/${id}`);
    expect(anon.body).toMatchObject({ id, favorited: false, favoritesCount: 2 });
    const created = await call(s.url, 'POST', '/articles', {
      json: { title: 'new', author: users.bob },
      headers: as.bob,
    });
    expect(created.body).toMatchObject({ favorited: false, favoritesCount: 0 });
    const patched = await call(s.url, 'PATCH', `/articles/${id}`, { json: { title: 'renamed' }, headers: as.cy });
    expect(patched.body).toMatchObject({ title: 'renamed', favorited: true, favoritesCount: 2 });
    const refused = await call(s.url, 'PATCH', `/articles/${id}`, { json: { favorited: false }, headers: as.cy });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ code: 'read_only_field' });
  });

  it('shows an expanded reference as its view: no email, and following per caller', async () => {
    const page = await call(s.url, 'GET', '/articles?expand=author&limit=2', { headers: as.bob });
    const author = (page.body as { data: Array<{ author: unknown }> }).data[0]?.author;
    expect(author).toEqual({ username: 'ann', bio: 'I am ann', following: true });
    const asCy = await call(s.url, 'GET', '/articles?expand=author&limit=2', { headers: as.cy });
    expect((asCy.body as { data: Array<{ author: unknown }> }).data[0]?.author).toEqual({
      username: 'ann',
      bio: 'I am ann',
      following: false,
    });
  });

  it('answers an operation with its view', async () => {
    const profile = await call(s.url, 'GET', `/users/${users.ann}`, { headers: as.bob });
    expect(profile.status).toBe(200);
    expect(profile.body).toEqual({ username: 'ann', bio: 'I am ann', following: true });
    const anon = await call(s.url, 'GET', `/users/${users.ann}`);
    expect(anon.body).toEqual({ username: 'ann', bio: 'I am ann', following: false });
  });

  it('leaves computed fields out of events: they belong to a caller, an event to every receiver', async () => {
    const events = await s.store.events.after(0, 1000, ['Article.created', 'Article.updated']);
    expect(events.length).toBeGreaterThan(20);
    for (const event of events) expect(JSON.stringify(event.data)).not.toMatch(/favorited|favoritesCount/);
  });

  it('answers as its OpenAPI document says: the view schema, computed fields read-only', async () => {
    const doc = (await call(s.url, 'GET', '/openapi.json')).body as {
      paths: Record<
        string,
        Record<string, { responses: Record<string, { content: Record<string, { schema: unknown }> }> }>
      >;
      components: { schemas: Record<string, { properties: Record<string, { readOnly?: boolean; type?: string }> }> };
    };
    const { schemas } = doc.components;
    expect(schemas.UserProfile?.properties).toMatchObject({
      username: { type: 'string' },
      following: { type: 'boolean', readOnly: true },
    });
    expect(schemas.UserProfile?.properties).not.toHaveProperty('email');
    expect(schemas.Article?.properties).toMatchObject({
      favorited: { type: 'boolean', readOnly: true },
      favoritesCount: { type: 'integer', readOnly: true },
    });
    expect(doc.paths['/users/{id}']?.get?.responses['200']?.content['application/json']?.schema).toEqual({
      $ref: '#/components/schemas/UserProfile',
    });
    const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
    ajv.addSchema(doc, 'openapi.json');
    const valid = (name: string, body: unknown) => {
      const validate = ajv.getSchema(`openapi.json#/components/schemas/${name}`);
      expect(validate?.(body), JSON.stringify(validate?.errors)).toBe(true);
    };
    valid('UserProfile', (await call(s.url, 'GET', `/users/${users.ann}`, { headers: as.bob })).body);
    valid('Article', (await call(s.url, 'GET', `/articles/${articles[0]}`, { headers: as.bob })).body);
    valid('ArticlePage', (await call(s.url, 'GET', '/articles?expand=author', { headers: as.bob })).body);
  });
});

describe('views and computed fields on a snake_case wire', () => {
  const SNAKE = `
ninefold: 1
service: { name: views-snake }
resources:
  User:
    fields:
      userName: { type: string, required: true, unique: true }
      bio: { type: string }
    views:
      Profile:
        fields: [userName, bio, createdAt]
        computed:
          followerCount: { type: integer, cel: "count(Follow, f, f.followee == record.id)" }
  Follow:
    fields:
      follower: { type: ref, to: User, required: true }
      followee: { type: ref, to: User, required: true, view: Profile }
endpoints:
  wire: { naming: snake_case }
  User:
    overrides:
      get: { view: Profile }
  Follow: { operations: [create, list] }
`;
  let s: Served;
  beforeAll(async () => {
    s = await servePlan(planOf(SNAKE));
  });
  afterAll(() => s?.close({ remove: true }));

  it("renames a view's fields and computed fields as the wire names every field, in answers and in the document", async () => {
    const ann = (await call(s.url, 'POST', '/users', { json: { user_name: 'ann', bio: 'hi' } })).body as { id: string };
    const bob = (await call(s.url, 'POST', '/users', { json: { user_name: 'bob' } })).body as { id: string };
    expect((await call(s.url, 'POST', '/follows', { json: { follower: bob.id, followee: ann.id } })).status).toBe(201);
    const got = await call(s.url, 'GET', `/users/${ann.id}`);
    expect(got.body).toEqual({ user_name: 'ann', bio: 'hi', created_at: expect.any(String), follower_count: 1 });
    const page = await call(s.url, 'GET', '/follows?expand=followee');
    const first = (page.body as { data: Array<Record<string, unknown>> }).data[0];
    expect(first?.followee).toEqual({ user_name: 'ann', bio: 'hi', created_at: expect.any(String), follower_count: 1 });

    const doc = (await call(s.url, 'GET', '/openapi.json')).body as {
      components: { schemas: Record<string, { properties: Record<string, unknown>; examples: unknown[] }> };
    };
    const profile = doc.components.schemas.UserProfile;
    expect(Object.keys(profile?.properties ?? {})).toEqual(['user_name', 'bio', 'created_at', 'follower_count']);
    expect(Object.keys((profile?.examples[0] ?? {}) as object)).toEqual(Object.keys(profile?.properties ?? {}));
    expect(doc.components.schemas.User?.properties).not.toHaveProperty('userName');
    const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
    ajv.addSchema(doc, 'openapi.json');
    const validate = ajv.getSchema('openapi.json#/components/schemas/UserProfile');
    expect(validate?.(got.body), JSON.stringify(validate?.errors)).toBe(true);
    expect(validate?.(profile?.examples[0]), JSON.stringify(validate?.errors)).toBe(true);
  });
});
