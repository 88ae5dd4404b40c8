import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderDocs } from '../src/emit/index.ts';
import { call, type Served, serveSpec } from './helpers/serve-spec.ts';

// Issue 17, item 5: a slug derived from the title and stored (unique with a -2, -3… suffix, derived again on a
// rename, or kept), and normalisers on every way a value comes in: create, merge patch, replace, ctx.records, filters.
const H = './test/helpers/derived-handlers.ts';
const SPEC = `
ninefold: 1
service: { name: derived }
resources:
  Article:
    fields:
      title: { type: string, required: true, normalize: [trim, collapseSpaces] }
      slug: { type: string, unique: true, maxLength: 24, derive: { slug: title } }
      tagList: { type: array, items: { type: string, maxLength: 8 }, normalize: [trim, lower, dedupe, sort] }
  Page:
    fields:
      title: { type: string, required: true }
      slug: { type: string, unique: true, derive: { slug: title, onChange: keep } }
  Member:
    fields:
      email: { type: string, format: email, unique: true, normalize: [trim, lower] }
      code: { type: string, normalize: [upper] }
endpoints:
  Article:
    operations: [list, get, create, update, replace]
    list: { filter: [slug, tagList] }
  Page: { operations: [get, create, update] }
  Member:
    operations: [list, get, create, update]
    list: { filter: [email, code] }
  custom:
    - { name: createArticle, method: POST, path: /door/articles, handler: ${H}#createArticle }
    - { name: memberByEmail, method: GET, path: /door/members, handler: ${H}#memberByEmail, request: { query: { email: { type: string } } } }
events: { auto: true }
`;

let s: Served;
beforeAll(async () => {
  s = await serveSpec(SPEC);
});
afterAll(() => s.close({ remove: true }));

const article = async (json: Record<string, unknown>) => {
  const r = await call(s.url, 'POST', '/articles', { json });
  expect(r.status, r.text).toBe(201);
  return r.body;
};

describe('a slug derived from the title', () => {
  it('is the slug of the title, transliterated, and stored', async () => {
    expect((await article({ title: 'How to train your dragon' })).slug).toBe('how-to-train-your-dragon');
    expect((await article({ title: 'Déjà vu & Straße' })).slug).toBe('deja-vu-and-strasse');
    const listed = await call(s.url, 'GET', '/articles?slug=deja-vu-and-strasse');
    expect(listed.body.data.map((a: { title: string }) => a.title)).toEqual(['Déjà vu & Straße']);
  });

  it('a title that is taken gets -2, -3…; a long one is cut to maxLength, suffix included', async () => {
    const slugs = [];
    for (let i = 0; i < 3; i++) slugs.push((await article({ title: 'Same Title' })).slug);
    expect(slugs).toEqual(['same-title', 'same-title-2', 'same-title-3']);
    const long = [];
    for (let i = 0; i < 2; i++) long.push((await article({ title: 'A very long title about many things' })).slug);
    expect(long).toEqual(['a-very-long-title-about', 'a-very-long-title-abou-2']);
  });

  it('a title with no slug in it falls back to the resource name', async () => {
    expect((await article({ title: '!!!' })).slug).toBe('article');
    expect((await article({ title: '日本語' })).slug).toBe('日本語');
  });

  it('concurrent creates with the same title all succeed, each with its own slug', async () => {
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => call(s.url, 'POST', '/articles', { json: { title: 'Race day' } })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(6).fill(201));
    const slugs = answers.map((a) => a.body.slug as string).sort();
    expect(new Set(slugs).size).toBe(6);
    for (const slug of slugs) expect(slug).toMatch(/^race-day(-\d+)?$/);
    expect(slugs).toContain('race-day');
  });

  it('a rename derives it again; a new title of the same slug keeps it; keep leaves it', async () => {
    await article({ title: 'Moving' });
    const second = await article({ title: 'Moving' });
    expect(second.slug).toBe('moving-2');
    const same = await call(s.url, 'PATCH', `/articles/${second.id}`, { json: { title: 'MOVING' } });
    expect(same.body.slug).toBe('moving-2');
    const renamed = await call(s.url, 'PATCH', `/articles/${second.id}`, { json: { title: 'Moved on' } });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body.slug).toBe('moved-on');
    const replaced = await call(s.url, 'PUT', `/articles/${second.id}`, { json: { title: 'Moving' } });
    expect(replaced.body.slug).toBe('moving-2');

    const page = (await call(s.url, 'POST', '/pages', { json: { title: 'First name' } })).body;
    const kept = await call(s.url, 'PATCH', `/pages/${page.id}`, { json: { title: 'Second name' } });
    expect(kept.body).toMatchObject({ title: 'Second name', slug: 'first-name' });
  });

  it('is read-only: a body that sends it is refused, on create and on update', async () => {
    const made = await call(s.url, 'POST', '/articles', { json: { title: 'Mine', slug: 'my-own' } });
    expect(made.status).toBe(422);
    expect(made.body.code).toBe('read_only_field');
    expect(made.body.errors[0].pointer).toBe('#/slug');
    const a = await article({ title: 'Theirs' });
    const patched = await call(s.url, 'PATCH', `/articles/${a.id}`, { json: { slug: 'x' } });
    expect(patched.body.code).toBe('read_only_field');
  });

  it('through ctx.records too, and the events carry the stored values', async () => {
    const made = await call(s.url, 'POST', '/door/articles', { json: { title: '  Door   way ', tagList: ['B', 'a'] } });
    expect(made.status, made.text).toBe(200);
    expect(made.body).toMatchObject({ title: 'Door way', slug: 'door-way', tagList: ['a', 'b'] });
    const events = await s.store.events.after(0, 1000);
    const created = events.filter((e) => e.recordId === made.body.id);
    expect(created.map((e) => e.type)).toEqual(['Article.created']);
    expect(created[0]?.data.record).toMatchObject({ title: 'Door way', slug: 'door-way', tagList: ['a', 'b'] });
  });
});

describe('normalisers', () => {
  it('trim and lower before validation: " A@B.com " passes format email and is stored lower-case', async () => {
    const m = await call(s.url, 'POST', '/members', { json: { email: '  Ann@Example.COM ', code: 'ab1' } });
    expect(m.status, m.text).toBe(201);
    expect(m.body).toMatchObject({ email: 'ann@example.com', code: 'AB1' });
    const again = await call(s.url, 'POST', '/members', { json: { email: 'ANN@example.com' } });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('unique_violation');
    const patched = await call(s.url, 'PATCH', `/members/${m.body.id}`, { json: { email: ' Ann2@Example.com' } });
    expect(patched.body.email).toBe('ann2@example.com');
  });

  it('arrays: items trimmed and lower-cased, then de-duplicated and sorted, on create, patch and replace', async () => {
    const a = await article({ title: 'Tags', tagList: [' Zeta', 'alpha', 'ALPHA ', 'mid'] });
    expect(a.tagList).toEqual(['alpha', 'mid', 'zeta']);
    const p = await call(s.url, 'PATCH', `/articles/${a.id}`, { json: { tagList: ['b', 'a', 'b'] } });
    expect(p.body.tagList).toEqual(['a', 'b']);
    const r = await call(s.url, 'PUT', `/articles/${a.id}`, { json: { title: 'Tags', tagList: ['y', 'x', 'X'] } });
    expect(r.body.tagList).toEqual(['x', 'y']);
  });

  it('item errors point where the client put the item', async () => {
    const r = await call(s.url, 'POST', '/articles', { json: { title: 't', tagList: ['zz', 'much-too-long'] } });
    expect(r.status).toBe(422);
    expect(r.body.errors[0].pointer).toBe('#/tagList/1');
  });

  it('filters compare the normalised value: ?email=ANN2@EXAMPLE.COM finds it, in lists and in ctx.records', async () => {
    const listed = await call(s.url, 'GET', `/members?email=${encodeURIComponent(' ANN2@EXAMPLE.COM')}`);
    expect(listed.body.data.map((m: { email: string }) => m.email)).toEqual(['ann2@example.com']);
    const prefix = await call(s.url, 'GET', '/members?code[prefix]=a');
    expect(prefix.body.data.map((m: { code: string }) => m.code)).toEqual(['AB1']);
    const tagged = await call(s.url, 'GET', '/articles?tagList[contains]=%20X');
    expect(tagged.body.data.map((a: { title: string }) => a.title)).toEqual(['Tags']);
    const door = await call(s.url, 'GET', '/door/members?email=Ann2@Example.com');
    expect(door.body.emails).toEqual(['ann2@example.com']);
  });
});

describe('documents show it as served', () => {
  it('OpenAPI: the slug is read-only and described, absent from bodies; normalisers are described', async () => {
    const doc = (await call(s.url, 'GET', '/openapi.json')).body;
    const schemas = doc.components.schemas;
    expect(schemas.Article.properties.slug).toMatchObject({ type: 'string', readOnly: true, maxLength: 24 });
    expect(schemas.Article.properties.slug.description).toBe(
      'Set by the service: the slug of title, derived again when title changes; a value already taken gets a -2, -3… suffix.',
    );
    expect(schemas.Page.properties.slug.description).toContain('the slug of title, kept when it changes');
    expect(Object.keys(schemas.ArticleCreate.properties)).toEqual(['title', 'tagList']);
    expect(schemas.Article.properties.tagList.description).toBe(
      'Normalised when it comes in (bodies and list filters): items trimmed and lower-cased, then the list de-duplicated and sorted.',
    );
    expect(schemas.Member.properties.email.description).toBe(
      'Normalised when it comes in (bodies and list filters): trimmed and lower-cased.',
    );
    expect(schemas.Article.examples[0]).toMatchObject({ title: 'Example title', slug: 'example-title' });
  });

  it('the nine-part document lists both in the constraints column', async () => {
    const md = renderDocs(s.plan, 'md');
    expect(md).toContain(
      '| `slug` | string |  | no |  | maxLength 24; unique; read-only; derived: the slug of title, derived again when title changes |  |',
    );
    expect(md).toContain('| `email` | string | email | no |  | unique; normalised: `trim`, `lower` |  |');
  });
});

describe('a derived field added to a resource that has records', () => {
  it('leaves them without a value until their next write, which derives one', async () => {
    const before = `
ninefold: 1
service: { name: later }
resources:
  Note:
    fields:
      title: { type: string, required: true }
endpoints:
  Note: { operations: [get, create, update] }
`;
    const first = await serveSpec(before);
    const note = (await call(first.url, 'POST', '/notes', { json: { title: 'Old note' } })).body;
    await first.close();
    const after = before.replace(
      'title: { type: string, required: true }',
      'title: { type: string, required: true }\n      slug: { type: string, unique: true, derive: { slug: title, onChange: keep } }',
    );
    const second = await serveSpec(after, { dbPath: first.dbPath });
    try {
      expect((await call(second.url, 'GET', `/notes/${note.id}`)).body.slug).toBeUndefined();
      const touched = await call(second.url, 'PATCH', `/notes/${note.id}`, { json: {} });
      expect(touched.body.slug).toBe('old-note');
    } finally {
      await second.close({ remove: true });
    }
  });
});
