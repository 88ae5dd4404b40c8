import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, freshDatabase, type Served, serveSpec } from './helpers/serve-spec.ts';

/** Conduit's shapes: one-record envelopes, a list envelope of its own, offset paging with a count. */
const CONDUIT = `
ninefold: 1
service: { name: conduit, title: Conduit, purpose: Envelopes and offset paging. }
resources:
  Profile:
    fields:
      userName: { type: string, required: true, maxLength: 40 }
      bio: { type: string }
      homeTown: { type: object, fields: { cityName: { type: string }, postCode: { type: string } } }
  Article:
    fields:
      title: { type: string, required: true }
      tagList: { type: array, items: { type: string } }
endpoints:
  Profile:
    path: /profiles
    operations: [list, get, create, update]
    wire: { envelope: profile, naming: snake_case }
    list: { filter: [userName], sort: [createdAt, userName] }
  Article:
    path: /articles
    operations: [list, create]
    wire: { envelope: article, paging: offset, list: { items: articles, total: articlesCount } }
    list: { pageSize: { default: 3, max: 5 } }
`;

/** Stripe's shapes: snake_case, an object member, a list object with has_more and url, starting_after paging. */
const STRIPE = `
ninefold: 1
service: { name: billing, title: Billing, purpose: Stripe-like lists. }
resources:
  Customer:
    idPrefix: cus
    object: customer
    fields:
      fullName: { type: string, required: true }
      address: { type: object, fields: { line1: { type: string }, postalCode: { type: string } } }
  Invoice:
    idPrefix: in
    object: invoice
    fields:
      customer: { type: ref, to: Customer, required: true }
      amountDue: { type: integer, required: true }
    states:
      field: status
      initial: draft
      transitions:
        pay: { from: draft, to: paid, input: { paymentMethod: { type: string, required: true } } }
events: { auto: true }
endpoints:
  basePath: /v1
  Invoice:
    list: { filter: [customer], expand: [customer] }
  wire: { naming: snake_case, paging: starting_after, list: { extras: { object: list, url: "{path}" } } }
  Customer:
    path: /customers
    list: { filter: [fullName], sort: [createdAt, fullName], pageSize: { default: 4, max: 10 } }
`;

/** GitHub's shapes: a bare array, page and per_page, RFC 8288 Link headers. */
const GITHUB = `
ninefold: 1
service: { name: forge, title: Forge, purpose: GitHub-like pages. }
resources:
  Issue:
    fields:
      title: { type: string, required: true }
      stateReason: { type: string }
endpoints:
  wire: { naming: snake_case, paging: page, list: { items: null } }
  Issue:
    path: /issues
    list: { filter: [stateReason], pageSize: { default: 4, max: 6 } }
`;

type Json = Record<string, unknown>;

/** Parses an RFC 8288 Link header into rel → target. */
const parseLinks = (header: string | null): Record<string, string> =>
  Object.fromEntries(
    (header ?? '')
      .split(/,\s*(?=<)/)
      .filter(Boolean)
      .map((part) => {
        const m = /^<([^>]*)>\s*;\s*rel="([^"]+)"$/.exec(part.trim());
        if (!m) throw new Error(`not a link: ${part}`);
        return [m[2] as string, m[1] as string];
      }),
  );

describe('envelopes and snake_case (Conduit)', () => {
  let s: Served;
  beforeAll(async () => {
    s = await serveSpec(CONDUIT, { dbPath: freshDatabase() });
  });
  afterAll(() => s.close({ remove: true }));

  it('takes and answers one record in its envelope, in snake_case both ways', async () => {
    const created = await call(s.url, 'POST', '/profiles', {
      json: { profile: { user_name: 'jake', bio: 'hi', home_town: { city_name: 'Oslo', post_code: '0150' } } },
    });
    expect(created.status).toBe(201);
    const profile = (created.body as Json).profile as Json;
    expect(Object.keys(created.body as Json)).toEqual(['profile']);
    expect(profile).toMatchObject({
      user_name: 'jake',
      bio: 'hi',
      home_town: { city_name: 'Oslo', post_code: '0150' },
    });
    expect(profile).toHaveProperty('created_at');
    expect(profile).not.toHaveProperty('userName');
    const got = await call(s.url, 'GET', `/profiles/${profile.id}`);
    expect(got.body).toEqual({ profile });
    const patched = await call(s.url, 'PATCH', `/profiles/${profile.id}`, {
      json: { profile: { home_town: { city_name: 'Bergen' } } },
    });
    expect(patched.status).toBe(200);
    expect(((patched.body as Json).profile as Json).home_town).toEqual({ city_name: 'Bergen', post_code: '0150' });
  });

  it('names fields in errors as the wire does, under the envelope', async () => {
    const bad = await call(s.url, 'POST', '/profiles', {
      json: { profile: { user_name: 7, home_town: { city_name: 1 } } },
    });
    expect(bad.status).toBe(422);
    const pointers = ((bad.body as Json).errors as Json[]).map((e) => e.pointer);
    expect(pointers).toEqual(expect.arrayContaining(['#/profile/user_name', '#/profile/home_town/city_name']));
    const missing = await call(s.url, 'POST', '/profiles', { json: { profile: {} } });
    expect(((missing.body as Json).errors as Json[])[0]).toMatchObject({
      pointer: '#/profile/user_name',
      code: 'required',
    });
    expect(JSON.stringify(missing.body)).not.toContain('userName');
    const engineName = await call(s.url, 'POST', '/profiles', { json: { profile: { userName: 'x' } } });
    expect(engineName.status).toBe(422);
    expect(((engineName.body as Json).errors as Json[])[0]).toMatchObject({
      pointer: '#/profile/userName',
      code: 'unknown_field',
    });
    const bare = await call(s.url, 'POST', '/profiles', { json: { user_name: 'x' } });
    expect(bare.status).toBe(422);
    expect(((bare.body as Json).errors as Json[]).map((e) => e.pointer)).toEqual(['#/user_name']);
    const noEnvelope = await call(s.url, 'POST', '/profiles', { json: {} });
    expect(((noEnvelope.body as Json).errors as Json[])[0]).toMatchObject({ pointer: '#/profile', code: 'required' });
  });

  it('reads filters and sorts by their wire names', async () => {
    await call(s.url, 'POST', '/profiles', { json: { profile: { user_name: 'amy' } } });
    const listed = await call(s.url, 'GET', '/profiles?user_name=amy&sort=-user_name,created_at');
    expect(listed.status).toBe(200);
    const data = (listed.body as Json).data as Json[];
    expect(data.map((p) => p.user_name)).toEqual(['amy']);
    expect(listed.body).toHaveProperty('next_cursor', null);
    const engineName = await call(s.url, 'GET', '/profiles?userName=amy');
    expect(engineName.status).toBe(400);
    expect((engineName.body as Json).detail).toBe('Cannot filter on "userName"; filterable: user_name.');
  });

  it('pages articles by limit and offset, with a count, to the end', async () => {
    for (let i = 0; i < 7; i++) await call(s.url, 'POST', '/articles', { json: { article: { title: `a${i}` } } });
    const seen: string[] = [];
    for (let offset = 0; ; offset += 3) {
      const page = await call(s.url, 'GET', `/articles?limit=3&offset=${offset}`);
      expect(page.status).toBe(200);
      const body = page.body as Json;
      expect(Object.keys(body)).toEqual(['articles', 'articlesCount']);
      expect(body.articlesCount).toBe(7);
      const articles = body.articles as Json[];
      seen.push(...articles.map((a) => a.title as string));
      if (articles.length < 3) break;
    }
    expect(seen).toEqual(['a0', 'a1', 'a2', 'a3', 'a4', 'a5', 'a6']);
    for (const [query, param] of [
      ['offset=-1', 'offset'],
      ['offset=x', 'offset'],
      ['limit=0', 'limit'],
      ['offset=1&offset=2', 'offset'],
      ['cursor=abc', undefined],
    ] as const) {
      const bad = await call(s.url, 'GET', `/articles?${query}`);
      expect(bad.status, query).toBe(400);
      expect((bad.body as Json).param, query).toBe(param);
    }
    const tooMany = await call(s.url, 'GET', '/articles?limit=6');
    expect(tooMany.status).toBe(400);
    expect(tooMany.body).toMatchObject({ code: 'limit_exceeded', param: 'limit' });
  });
});

describe('object member, list object and starting_after (Stripe)', () => {
  let s: Served;
  const ids: string[] = [];
  beforeAll(async () => {
    s = await serveSpec(STRIPE, { dbPath: freshDatabase() });
    for (let i = 0; i < 9; i++) {
      const r = await call(s.url, 'POST', '/v1/customers', {
        json: { full_name: `c${i}`, address: { line1: 'x', postal_code: `${i}` } },
      });
      ids.push((r.body as Json).id as string);
    }
  });
  afterAll(() => s.close({ remove: true }));

  it('answers a record with its object member, snake_case inside', async () => {
    const got = await call(s.url, 'GET', `/v1/customers/${ids[0]}`);
    expect(Object.keys(got.body as Json).slice(0, 2)).toEqual(['id', 'object']);
    expect(got.body).toMatchObject({ object: 'customer', full_name: 'c0', address: { postal_code: '0' } });
    const sent = await call(s.url, 'POST', '/v1/customers', { json: { full_name: 'x', object: 'customer' } });
    expect(sent.status).toBe(422);
  });

  it('walks forward with starting_after to the end while records are added, each once', async () => {
    const seen: string[] = [];
    let after: string | undefined;
    let added = 0;
    for (;;) {
      const page = await call(s.url, 'GET', `/v1/customers?limit=4${after ? `&starting_after=${after}` : ''}`);
      expect(page.status).toBe(200);
      const body = page.body as Json;
      expect(body).toMatchObject({ object: 'list', url: '/v1/customers' });
      const data = body.data as Json[];
      seen.push(...data.map((c) => c.id as string));
      if (added < 2) {
        added++;
        await call(s.url, 'POST', '/v1/customers', { json: { full_name: `late${added}` } });
      }
      if (!body.has_more) break;
      after = data.at(-1)?.id as string;
    }
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.slice(0, 9)).toEqual(ids);
    expect(seen.length).toBe(11);
  });

  it('walks backward with ending_before, and sorts and filters by wire names', async () => {
    const page = await call(s.url, 'GET', `/v1/customers?limit=3&ending_before=${ids[5]}`);
    const body = page.body as Json;
    expect((body.data as Json[]).map((c) => c.id)).toEqual(ids.slice(2, 5));
    expect(body.has_more).toBe(true);
    const first = await call(s.url, 'GET', `/v1/customers?limit=3&ending_before=${ids[2]}`);
    expect(((first.body as Json).data as Json[]).map((c) => c.id)).toEqual(ids.slice(0, 2));
    expect((first.body as Json).has_more).toBe(false);
    const sorted = await call(s.url, 'GET', `/v1/customers?sort=-full_name&limit=2&starting_after=${ids[8]}`);
    expect(((sorted.body as Json).data as Json[]).map((c) => c.full_name)).toEqual(['c7', 'c6']);
    const filtered = await call(s.url, 'GET', '/v1/customers?full_name=c3');
    expect(((filtered.body as Json).data as Json[]).map((c) => c.id)).toEqual([ids[3]]);
  });

  it('takes a transition input and expands references in wire names, and events carry the wire shape', async () => {
    const created = await call(s.url, 'POST', '/v1/invoices', { json: { customer: ids[0], amount_due: 500 } });
    expect(created.status).toBe(201);
    const invoice = created.body as Json;
    expect(invoice).toMatchObject({ object: 'invoice', amount_due: 500, status: 'draft' });
    const bad = await call(s.url, 'POST', `/v1/invoices/${invoice.id}/pay`, { json: { paymentMethod: 'card' } });
    expect(bad.status).toBe(422);
    const paid = await call(s.url, 'POST', `/v1/invoices/${invoice.id}/pay`, { json: { payment_method: 'card' } });
    expect(paid.status).toBe(200);
    expect(paid.body).toMatchObject({ id: invoice.id, object: 'invoice', status: 'paid', amount_due: 500 });
    const listed = await call(s.url, 'GET', `/v1/invoices?customer=${ids[0]}&expand=customer`);
    const first = ((listed.body as Json).data as Json[])[0] as Json;
    expect(first.customer).toMatchObject({ id: ids[0], object: 'customer', full_name: 'c0' });
    const events = (await call(s.url, 'GET', '/v1/events?type=Invoice.created,Invoice.paid')).body as Json;
    const [made, took] = events.data as Array<{ type: string; data: Json }>;
    expect(made?.data.record).toMatchObject({ id: invoice.id, object: 'invoice', amount_due: 500 });
    expect(made?.data.record).not.toHaveProperty('amountDue');
    expect(took).toMatchObject({ type: 'Invoice.paid', data: { input: { payment_method: 'card' } } });
  });

  it('refuses bad paging parameters, naming them', async () => {
    for (const [query, param] of [
      ['starting_after=cus_nope', 'starting_after'],
      ['starting_after=a%20b', 'starting_after'],
      [`starting_after=${ids[0]}&ending_before=${ids[1]}`, 'ending_before'],
      ['limit=abc', 'limit'],
    ] as const) {
      const bad = await call(s.url, 'GET', `/v1/customers?${query}`);
      expect(bad.status, query).toBe(400);
      expect((bad.body as Json).param, query).toBe(param);
    }
  });
});

describe('page and per_page with Link headers (GitHub)', () => {
  let s: Served;
  beforeAll(async () => {
    s = await serveSpec(GITHUB, { dbPath: freshDatabase() });
    for (let i = 0; i < 10; i++)
      await call(s.url, 'POST', '/issues', { json: { title: `i${i}`, state_reason: i % 2 ? 'odd' : 'even' } });
  });
  afterAll(() => s.close({ remove: true }));

  it('answers a bare array and links first, prev, next and last', async () => {
    const second = await call(s.url, 'GET', '/issues?page=2&per_page=3&state_reason=even');
    expect(Array.isArray(second.body)).toBe(true);
    expect((second.body as Json[]).map((i) => i.title)).toEqual(['i6', 'i8']);
    const links = parseLinks(second.headers.get('link'));
    expect(links).toEqual({
      first: '/issues?state_reason=even&page=1&per_page=3',
      prev: '/issues?state_reason=even&page=1&per_page=3',
      last: '/issues?state_reason=even&page=2&per_page=3',
    });
  });

  it('follows next links to the end, each issue once', async () => {
    const seen: string[] = [];
    let next: string | undefined = '/issues?per_page=4';
    let pages = 0;
    while (next) {
      const page = await call(s.url, 'GET', next);
      expect(page.status).toBe(200);
      seen.push(...(page.body as Json[]).map((i) => i.title as string));
      const links = parseLinks(page.headers.get('link'));
      expect(links.last).toBe('/issues?page=3&per_page=4');
      next = links.next;
      pages++;
    }
    expect(pages).toBe(3);
    expect(seen).toEqual(Array.from({ length: 10 }, (_, i) => `i${i}`));
  });

  it('refuses bad pages, naming the parameter', async () => {
    for (const [query, param, code] of [
      ['page=0', 'page', 'invalid_query'],
      ['page=x', 'page', 'invalid_query'],
      ['per_page=7', 'per_page', 'limit_exceeded'],
      ['per_page=0', 'per_page', 'invalid_query'],
    ] as const) {
      const bad = await call(s.url, 'GET', `/issues?${query}`);
      expect(bad.status, query).toBe(400);
      expect(bad.body, query).toMatchObject({ code, param });
    }
  });
});
