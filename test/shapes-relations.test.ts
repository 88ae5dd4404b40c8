import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../src/parts/auth/keys.ts';
import { checkSource } from '../src/spec/check.ts';
import type { Diagnostic } from '../src/spec/diagnostic-codes.ts';
import { parseSpecText } from '../src/spec/load.ts';
import type { Store } from '../src/storage/index.ts';
import { call, planOf, type Served, servePlan } from './helpers/serve-spec.ts';
import { waitFor } from './helpers/wait-for.ts';

const SPEC = readFileSync(new URL('./fixtures/relations/service.yaml', import.meta.url), 'utf8');

/** Counts the store's record reads, to show that a filtered page costs one query. */
const counting =
  (counts: { reads: number }) =>
  (store: Store): Store =>
    new Proxy(store, {
      get(target, name) {
        const value = Reflect.get(target, name);
        if (typeof value !== 'function') return value;
        if (name === 'list' || name === 'get' || name === 'getMany' || name === 'distinct')
          return (...args: unknown[]) => {
            counts.reads++;
            return value.apply(target, args);
          };
        return value.bind(target);
      },
    });

type Article = {
  slug: string;
  title: string;
  author: string;
  tagList: string[];
  favorited: boolean;
  favoritesCount: number;
};
type Page = { articles: Article[]; articlesCount: number };

describe('relational lists and relation operations (Conduit, GitHub stars)', () => {
  let s: Served;
  const counts = { reads: 0 };
  const as: Record<string, Record<string, string>> = {};
  const users: Record<string, string> = {};

  const eventsAfter = async (seq: number) => (await s.store.events.after(seq, 1000)).map((e) => e.type);

  beforeAll(async () => {
    s = await servePlan(planOf(SPEC), { store: counting(counts) });
    const root = { 'x-api-key': (await issueApiKey(s.store, { subject: 'root', roles: [] })).key };
    for (const name of ['jake', 'ann', 'cy']) {
      const made = await call(s.url, 'POST', '/users', { json: { profile: { username: name } }, headers: root });
      expect(made.status).toBe(201);
      const id = (made.body as { profile: { id: string } }).profile.id;
      users[name] = id;
      as[name] = { 'x-api-key': (await issueApiKey(s.store, { subject: id, roles: [] })).key };
    }
    // jake writes 24 articles, ann 3; tags: every article "dragons", the even ones "training" too.
    for (let i = 0; i < 27; i++) {
      const author = i < 24 ? 'jake' : 'ann';
      const tagList = i % 2 === 0 ? ['Dragons', ' training'] : ['dragons'];
      const made = await call(s.url, 'POST', '/articles', {
        json: { article: { title: `Article ${String(i).padStart(2, '0')}`, author: users[author], tagList } },
        headers: as[author] as Record<string, string>,
      });
      expect(made.status).toBe(201);
    }
  });
  afterAll(() => s?.close({ remove: true }));

  const list = async (query: string, who?: string): Promise<Page> => {
    const got = await call(s.url, 'GET', `/articles${query}`, who ? { headers: as[who] } : {});
    expect(got.status, got.text).toBe(200);
    return got.body as Page;
  };

  it('favourites an article: 200 with the article, its computed fields updated; twice is still one record', async () => {
    const seq = await s.store.events.lastSeq();
    const first = await call(s.url, 'POST', '/articles/article-03/favorite', { headers: as.ann });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ article: { slug: 'article-03', favorited: true, favoritesCount: 1 } });
    const again = await call(s.url, 'POST', '/articles/article-03/favorite', { headers: as.ann });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ article: { favorited: true, favoritesCount: 1 } });
    expect(await s.countRows('favorite')).toBe(1);
    const removed = await call(s.url, 'DELETE', '/articles/article-03/favorite', { headers: as.ann });
    expect(removed.status).toBe(200);
    expect(removed.body).toMatchObject({ article: { slug: 'article-03', favorited: false, favoritesCount: 0 } });
    const missing = await call(s.url, 'DELETE', '/articles/article-03/favorite', { headers: as.ann });
    expect(missing.status).toBe(200);
    expect(missing.body).toMatchObject({ article: { favorited: false, favoritesCount: 0 } });
    expect(await s.countRows('favorite')).toBe(0);
    await waitFor(async () => (await eventsAfter(seq)).includes('Favorite.deleted'), 'Favorite.deleted');
    expect(await eventsAfter(seq)).toEqual(['Favorite.created', 'Favorite.deleted']);
  });

  it('refuses a relation change without a caller (401) and for a target that does not exist (404)', async () => {
    const anonymous = await call(s.url, 'POST', '/articles/article-03/favorite');
    expect(anonymous.status).toBe(401);
    const none = await call(s.url, 'POST', '/articles/no-such-article/favorite', { headers: as.ann });
    expect(none.status).toBe(404);
    expect(none.body).toMatchObject({ code: 'not_found' });
    expect(await s.countRows('favorite')).toBe(0);
  });

  it('filters through a join resource (?favorited=) and a reference (?author=), with the declared envelope', async () => {
    for (const i of [1, 5, 24, 25])
      expect(
        (await call(s.url, 'POST', `/articles/article-${String(i).padStart(2, '0')}/favorite`, { headers: as.cy }))
          .status,
      ).toBe(200);
    const favourites = await list('?favorited=cy&sort=title');
    expect(favourites.articles.map((a) => a.slug)).toEqual(['article-01', 'article-05', 'article-24', 'article-25']);
    expect(favourites.articlesCount).toBe(4);
    const byAnn = await list('?author=ann&sort=title');
    expect(byAnn.articles.map((a) => a.slug)).toEqual(['article-24', 'article-25', 'article-26']);
    expect(byAnn.articlesCount).toBe(3);
    const both = await list('?author=ann&favorited=cy&sort=title', 'cy');
    expect(both.articles.map((a) => [a.slug, a.favorited, a.favoritesCount])).toEqual([
      ['article-24', true, 1],
      ['article-25', true, 1],
    ]);
    // The value is normalised as User.username is (trim, lower).
    expect((await list('?author=%20ANN')).articlesCount).toBe(3);
    expect(await list('?author=nobody')).toEqual({ articles: [], articlesCount: 0 });
    expect(await list('?favorited=jake')).toEqual({ articles: [], articlesCount: 0 });
  });

  it('names a filter as the interface does (?tag= is tagList[contains], normalised like the field)', async () => {
    const training = await list('?tag=training&limit=100');
    expect(training.articlesCount).toBe(14);
    expect(training.articles.every((a) => a.tagList.includes('training'))).toBe(true);
    expect((await list('?tag=TRAINING&limit=1')).articlesCount).toBe(14);
    const paged = await list('?tag=training&author=jake&sort=title&limit=5&offset=10');
    expect(paged.articles.map((a) => a.slug)).toEqual(['article-20', 'article-22']);
    expect(paged.articlesCount).toBe(12);
  });

  it('answers a filtered page of 20 with its computed fields in one list query', async () => {
    counts.reads = 0;
    const page = await list('?tag=dragons&author=jake&limit=20', 'cy');
    expect(page.articles).toHaveLength(20);
    expect(page.articlesCount).toBe(24);
    // One SELECT for the page (its computed fields and related conditions inside it); the count is its own.
    expect(counts.reads).toBe(1);
  });

  it('refuses bad values of declared parameters with 400 and the parameter named', async () => {
    const empty = await call(s.url, 'GET', '/articles?author=');
    expect(empty.status).toBe(400);
    expect(empty.body).toMatchObject({ code: 'invalid_filter' });
    const twice = await call(s.url, 'GET', '/articles?author=a&author=b');
    expect(twice.status).toBe(400);
    const unknown = await call(s.url, 'GET', '/articles?writer=ann');
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ code: 'invalid_filter' });
  });

  it('follows a profile (POST|DELETE /profiles/{username}/follow → the profile view) and feeds what it follows', async () => {
    const seq = await s.store.events.lastSeq();
    expect((await call(s.url, 'GET', '/articles/feed', { headers: as.cy })).body).toEqual({
      articles: [],
      articlesCount: 0,
    });
    const followed = await call(s.url, 'POST', '/profiles/ann/follow', { headers: as.cy });
    expect(followed.status).toBe(200);
    expect(followed.body).toEqual({ profile: { username: 'ann', following: true } });
    const feed = await call(s.url, 'GET', '/articles/feed?limit=2', { headers: as.cy });
    expect(feed.status).toBe(200);
    const page = feed.body as Page;
    // The feed keeps the list's sort (newest first), paging and envelope.
    expect(page.articles.map((a) => a.slug)).toEqual(['article-26', 'article-25']);
    expect(page.articlesCount).toBe(3);
    expect((await call(s.url, 'GET', '/articles/feed')).body).toEqual({ articles: [], articlesCount: 0 });
    const unfollowed = await call(s.url, 'DELETE', '/profiles/ann/follow', { headers: as.cy });
    expect(unfollowed.body).toEqual({ profile: { username: 'ann', following: false } });
    expect((await call(s.url, 'GET', '/articles/feed', { headers: as.cy })).body).toEqual({
      articles: [],
      articlesCount: 0,
    });
    expect((await call(s.url, 'POST', '/profiles/ghost/follow', { headers: as.cy })).status).toBe(404);
    await waitFor(async () => (await eventsAfter(seq)).includes('Follow.deleted'), 'Follow.deleted');
    expect(await eventsAfter(seq)).toEqual(['Follow.created', 'Follow.deleted']);
  });

  it('lists the distinct tags as {"tags": [...]}, in one query, with limit, offset and sort', async () => {
    counts.reads = 0;
    const tags = await call(s.url, 'GET', '/tags');
    expect(tags.status).toBe(200);
    expect(tags.body).toEqual({ tags: ['dragons', 'training'] });
    expect(counts.reads).toBe(1);
    expect((await call(s.url, 'GET', '/tags?sort=-value&limit=1')).body).toEqual({ tags: ['training'] });
    expect((await call(s.url, 'GET', '/tags?offset=1')).body).toEqual({ tags: ['training'] });
    const bad = await call(s.url, 'GET', '/tags?sort=count');
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'invalid_sort' });
    expect((await call(s.url, 'GET', '/tags?page=2')).status).toBe(400);
  });

  it('stars a repository: PUT and DELETE /user/starred/{owner}/{repo} answer 204; a missing star is 404', async () => {
    const repo = await call(s.url, 'POST', '/repos', { json: { owner: users.jake, name: 'hello' }, headers: as.jake });
    expect(repo.status).toBe(201);
    const seq = await s.store.events.lastSeq();
    for (let i = 0; i < 2; i++) {
      const put = await call(s.url, 'PUT', '/user/starred/jake/hello', { headers: as.ann });
      expect(put.status).toBe(204);
      expect(put.text).toBe('');
    }
    expect((await call(s.url, 'GET', '/repos/jake/hello', { headers: as.ann })).body).toMatchObject({
      name: 'hello',
      stargazersCount: 1,
    });
    expect((await call(s.url, 'DELETE', '/user/starred/jake/hello', { headers: as.ann })).status).toBe(204);
    const again = await call(s.url, 'DELETE', '/user/starred/jake/hello', { headers: as.ann });
    expect(again.status).toBe(404);
    expect(again.body).toMatchObject({ code: 'not_found' });
    expect((await call(s.url, 'PUT', '/user/starred/jake/nope', { headers: as.ann })).status).toBe(404);
    await waitFor(async () => (await eventsAfter(seq)).includes('Star.deleted'), 'Star.deleted');
    expect(await eventsAfter(seq)).toEqual(['Star.created', 'Star.deleted']);
  });

  it('creates one star for many concurrent PUTs of the same pair', async () => {
    const seq = await s.store.events.lastSeq();
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => call(s.url, 'PUT', '/user/starred/jake/hello', { headers: as.cy })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(204));
    expect(await s.countRows('star')).toBe(1);
    await waitFor(async () => (await eventsAfter(seq)).includes('Star.created'), 'Star.created');
    expect(await eventsAfter(seq)).toEqual(['Star.created']);
  });

  it('documents every construct in the OpenAPI document as served', async () => {
    const doc = (await call(s.url, 'GET', '/openapi.json')).body as {
      paths: Record<
        string,
        Record<
          string,
          {
            parameters?: Array<{ name: string; schema: unknown }>;
            responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
          }
        >
      >;
    };
    const listParams = doc.paths['/articles']?.get?.parameters ?? [];
    for (const name of ['author', 'favorited', 'tag'])
      expect(
        listParams.find((p) => p.name === name),
        name,
      ).toMatchObject({ schema: { type: 'string' } });
    expect(doc.paths['/articles/feed']?.get?.responses['200']?.content?.['application/json']?.schema).toEqual({
      $ref: '#/components/schemas/ArticlePage',
    });
    expect(doc.paths['/tags']?.get?.responses['200']?.content?.['application/json']?.schema).toMatchObject({
      properties: { tags: { type: 'array', items: { type: 'string' } } },
      required: ['tags'],
    });
    const star = doc.paths['/user/starred/{owner}/{repo}'];
    expect(Object.keys(star ?? {}).sort()).toEqual(['delete', 'put']);
    expect(star?.put?.responses['204']).toBeDefined();
    expect(star?.put?.responses['204']?.content).toBeUndefined();
    expect(star?.put?.parameters?.map((p) => p.name)).toEqual(['owner', 'repo']);
    expect(
      doc.paths['/profiles/{username}/follow']?.post?.responses['200']?.content?.['application/json']?.schema,
    ).toEqual({
      type: 'object',
      properties: { profile: { $ref: '#/components/schemas/UserProfile' } },
      required: ['profile'],
      additionalProperties: false,
    });
  });
});

describe('ninefold check on relations', () => {
  const show = (d: Diagnostic) => `${d.severity} ${d.code}@${d.line}:${d.col}`;
  it('reports each mistake where it is written', () => {
    const found = checkSource({
      ...parseSpecText(
        `ninefold: 1
service: { name: bad, title: Bad, purpose: Relation mistakes. }
resources:
  User: { fields: { username: { type: string, unique: true }, meta: { type: json } } }
  Article:
    fields:
      title: { type: string }
      author: { type: ref, to: User }
      tagList: { type: array, items: { type: string } }
  Favorite:
    fields: { user: { type: ref, to: User }, article: { type: ref, to: Article } }
endpoints:
  Article:
    list:
      params:
        author: { field: writer.username }
        meta: { field: author.meta }
        tag: { field: tagList, op: eq }
        favorited: { join: Favourite, field: user.username }
    lists:
      feed: { path: /feed, filter: "count(Favorite, f, f.user == caller) > 0" }
      tags: { path: /tags, distinct: tags }
  Favorite:
    relation: { caller: user, target: title, path: "/articles/{id}/favorite" }
`,
        'spec.yaml',
      ),
      dir: '.',
    }).diagnostics;
    expect(found.map(show)).toEqual([
      'error unknown-list-param-path@16:26',
      'error list-param-not-sql@17:24',
      'error list-param-not-sql@18:36',
      'error unknown-list-param-path@19:28',
      'error list-filter-not-sql@21:37',
      'error invalid-named-list@22:38',
      'error relation-not-join@24:39',
      'warning relation-not-unique@24:39',
    ]);
  });
});

describe('ninefold check on relation routes', () => {
  it('reports a named list or relation on a route another endpoint serves', () => {
    const found = checkSource({
      ...parseSpecText(
        `ninefold: 1
service: { name: bad, title: Bad, purpose: Route clashes. }
resources:
  User: { fields: { username: { type: string, unique: true } } }
  Follow:
    unique: [[follower, followee]]
    fields: { follower: { type: ref, to: User }, followee: { type: ref, to: User } }
endpoints:
  User:
    lists:
      names: { path: /users, distinct: username }
  Follow:
    relation: { caller: follower, target: followee, path: "/follows/{id}" }
`,
        'spec.yaml',
      ),
      dir: '.',
    }).diagnostics;
    expect(found.map((d) => `${d.code}@${d.line}`)).toEqual(['duplicate-route@11', 'duplicate-route@13']);
  });
});
