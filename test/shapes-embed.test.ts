import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../src/parts/auth/keys.ts';
import { call, planOf, type Served, servePlan } from './helpers/serve-spec.ts';

// References always shown as the records they name (`embed: true`), and `expand` on a read, in both spellings.
const SPEC = `
ninefold: 1
service: { name: embed-test }
resources:
  User:
    fields:
      username: { type: string, required: true, unique: true }
      email: { type: string, format: email, required: true }
    views:
      Profile:
        fields: [username]
        computed:
          following: { type: boolean, cel: "exists(Follow, f, f.follower == caller && f.followee == record.id)" }
  Follow:
    fields:
      follower: { type: ref, to: User, required: true }
      followee: { type: ref, to: User, required: true }
  Article:
    fields:
      title: { type: string, required: true }
      author: { type: ref, to: User, view: Profile, embed: true, required: true }
    states:
      field: status
      initial: draft
      transitions:
        publish: { from: [draft], to: published }
  Comment:
    fields:
      body: { type: string, required: true }
      article: { type: ref, to: Article, required: true }
auth:
  schemes: { key: { type: apiKey, in: header, name: X-Api-Key } }
  require: [key]
endpoints:
  Follow: { operations: [create] }
  Comment: { operations: [create, get, list] }
events:
  auto: true
`;

const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ??
  addFormatsModule) as unknown as (ajv: Ajv2020) => Ajv2020;

describe('embedded references and expand on reads', () => {
  let s: Served;
  const as: Record<string, Record<string, string>> = {};
  const users: Record<string, string> = {};
  let article = '';
  let comment = '';
  beforeAll(async () => {
    s = await servePlan(planOf(SPEC));
    for (const name of ['ann', 'bob']) {
      const key = (await issueApiKey(s.store, { subject: `seed-${name}`, roles: [] })).key;
      const created = await call(s.url, 'POST', '/users', {
        json: { username: name, email: `${name}@example.com` },
        headers: { 'x-api-key': key },
      });
      users[name] = (created.body as { id: string }).id;
      as[name] = { 'x-api-key': (await issueApiKey(s.store, { subject: users[name] as string, roles: [] })).key };
    }
    await call(s.url, 'POST', '/follows', { json: { follower: users.bob, followee: users.ann }, headers: as.bob });
  });
  afterAll(() => s?.close({ remove: true }));

  const profile = (name: 'ann' | 'bob', following: boolean) => ({ username: name, following });

  it('shows an embedded reference as its view in every answer, for the caller, and takes an id in requests', async () => {
    const created = await call(s.url, 'POST', '/articles', {
      json: { title: 'Hi', author: users.ann },
      headers: as.bob,
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ title: 'Hi', author: profile('ann', true) });
    article = (created.body as { id: string }).id;

    expect((await call(s.url, 'GET', `/articles/${article}`, { headers: as.bob })).body).toMatchObject({
      author: profile('ann', true),
    });
    expect((await call(s.url, 'GET', `/articles/${article}`, { headers: as.ann })).body).toMatchObject({
      author: profile('ann', false),
    });
    const page = await call(s.url, 'GET', '/articles', { headers: as.bob });
    expect((page.body as { data: unknown[] }).data).toEqual([
      expect.objectContaining({ author: profile('ann', true) }),
    ]);
    const patched = await call(s.url, 'PATCH', `/articles/${article}`, { json: { title: 'Hello' }, headers: as.ann });
    expect(patched.body).toMatchObject({ title: 'Hello', author: profile('ann', false) });
    const published = await call(s.url, 'POST', `/articles/${article}/publish`, { json: {}, headers: as.bob });
    expect(published.status, published.text).toBe(200);
    expect(published.body).toMatchObject({ status: 'published', author: profile('ann', true) });

    // The email is not part of the view: it never leaks through the embedding.
    expect(JSON.stringify(page.body)).not.toContain('@example.com');
    // Events carry the record as stored: the reference is the id.
    const events = await call(s.url, 'GET', '/events?type=Article.created', { headers: as.bob });
    expect(events.status).toBe(200);
    const data = (events.body as { data: Array<{ data: { record: { author: unknown } } }> }).data;
    expect(data[0]?.data.record.author).toBe(users.ann);
  });

  it('expands references on a read with expand=… or expand[]=…, and on a list with expand[]=data.…', async () => {
    const made = await call(s.url, 'POST', '/comments', { json: { body: 'Nice', article }, headers: as.bob });
    comment = (made.body as { id: string }).id;
    const plainRead = await call(s.url, 'GET', `/comments/${comment}`, { headers: as.bob });
    expect((plainRead.body as { article: unknown }).article).toBe(article);
    for (const query of ['expand=article', 'expand[]=article']) {
      const read = await call(s.url, 'GET', `/comments/${comment}?${query}`, { headers: as.bob });
      expect(read.status, read.text).toBe(200);
      // The expanded article shows its own embedded author, as every answer of an article does.
      expect(read.body).toMatchObject({ article: { id: article, title: 'Hello', author: profile('ann', true) } });
    }
    for (const query of ['expand=article', 'expand[]=article', 'expand[]=data.article']) {
      const page = await call(s.url, 'GET', `/comments?${query}`, { headers: as.bob });
      expect(page.status, page.text).toBe(200);
      expect((page.body as { data: unknown[] }).data).toEqual([
        expect.objectContaining({ article: expect.objectContaining({ id: article }) }),
      ]);
    }
    for (const query of ['expand=body', 'expand[]=nope', 'expand=article&expand[]=article', 'expand[]=']) {
      const bad = await call(s.url, 'GET', `/comments/${comment}?${query}`, { headers: as.bob });
      expect(bad.status, query).toBe(400);
      expect((bad.body as { code: string }).code).toBe('invalid_expand');
    }
  });

  it('documents what it answers: the embedded view in the record schema and examples, expand on reads', async () => {
    const doc = (await call(s.url, 'GET', '/openapi.json')).body as {
      paths: Record<string, Record<string, { parameters?: Array<{ name: string }> }>>;
      components: { schemas: Record<string, { properties: Record<string, unknown>; examples?: unknown[] }> };
    };
    const { schemas } = doc.components;
    expect(schemas.Article?.properties.author).toMatchObject({ allOf: [{ $ref: '#/components/schemas/UserProfile' }] });
    expect(schemas.ArticleEventRecord?.properties.author).toMatchObject({ type: 'string' });
    expect(doc.paths['/comments/{id}']?.get?.parameters?.map((p) => p.name)).toContain('expand');
    expect(doc.paths['/articles/{id}']?.get?.parameters?.map((p) => p.name)).not.toContain('expand');
    const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
    ajv.addSchema(doc, 'openapi.json');
    const valid = (name: string, body: unknown) => {
      const validate = ajv.getSchema(`openapi.json#/components/schemas/${name}`);
      expect(validate?.(body), `${name}: ${JSON.stringify(validate?.errors)}`).toBe(true);
    };
    valid('Article', schemas.Article?.examples?.[0]);
    valid('Article', (await call(s.url, 'GET', `/articles/${article}`, { headers: as.bob })).body);
    valid('ArticlePage', (await call(s.url, 'GET', '/articles', { headers: as.bob })).body);
    valid('CommentListed', (await call(s.url, 'GET', `/comments/${comment}?expand=article`, { headers: as.bob })).body);
    valid('CommentListed', (await call(s.url, 'GET', `/comments/${comment}`, { headers: as.bob })).body);
  });
});
