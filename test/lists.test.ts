import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type Served, serveSpec } from './helpers/serve-spec.ts';

const SPEC = `
ninefold: 1
service: { name: lists, title: Lists, purpose: List filters and pages over HTTP. }
resources:
  Customer:
    idPrefix: cus
    fields:
      name: { type: string, required: true }
      tier: { type: enum, values: [free, pro, gold], default: free }
      age: { type: integer }
      city: { type: string, nullable: true }
      tags: { type: array, items: { type: string } }
      note: { type: string }
  Order:
    idPrefix: ord
    fields:
      customer: { type: ref, to: Customer, required: true }
endpoints:
  Customer:
    operations: [list, get, create]
    path: /customers
    list:
      filter: [name, tier, age, city, tags]
      sort: [createdAt, name, age, city, tier]
      pageSize: { default: 10, max: 50 }
  Order:
    operations: [list, create]
    path: /orders
    list: { filter: [customer], sort: [createdAt], expand: [customer] }
`;

type Rec = { id: string; name: string; tier: string; age?: number; city?: string | null; createdAt: string };

let s: Served;
const all: Rec[] = [];
const TIERS = ['free', 'pro', 'gold'];
beforeAll(async () => {
  s = await serveSpec(SPEC);
  for (let i = 0; i < 55; i++) {
    const body = {
      name: `n${String(i).padStart(2, '0')}`,
      tier: TIERS[i % 3],
      age: 20 + (i % 7),
      city: i % 4 === 0 ? null : `c${i % 5}`,
      tags: i % 2 ? ['odd', `t${i}`] : ['even'],
    };
    const r = await call(s.url, 'POST', '/customers', { json: body });
    expect(r.status).toBe(201);
    all.push(r.body);
  }
});
afterAll(() => s.close({ remove: true }));

const list = (query: string) => call(s.url, 'GET', `/customers?${query}`);

/** Follows nextCursor to the end and returns every id seen, in order. */
const walk = async (query: string, onPage?: (page: number) => Promise<void>): Promise<string[]> => {
  const ids: string[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 100; page++) {
    const r = await list(`${query}${cursor ? `&cursor=${cursor}` : ''}`);
    expect(r.status, r.text).toBe(200);
    ids.push(...r.body.data.map((d: Rec) => d.id));
    cursor = r.body.nextCursor;
    if (!cursor) return ids;
    await onPage?.(page);
  }
  throw new Error('pagination did not end');
};

describe('filters', () => {
  const names = async (query: string) => {
    const r = await list(`${query}&limit=50&sort=name`);
    expect(r.status, r.text).toBe(200);
    return r.body.data.map((d: Rec) => d.name) as string[];
  };
  const expected = (pred: (r: Rec & { tags: string[] }) => boolean) =>
    (all as Array<Rec & { tags: string[] }>)
      .filter(pred)
      .map((r) => r.name)
      .slice(0, 50);

  it.each([
    ['tier=pro', (r: Rec) => r.tier === 'pro'],
    ['tier[eq]=gold', (r: Rec) => r.tier === 'gold'],
    ['tier[ne]=free', (r: Rec) => r.tier !== 'free'],
    ['age[gt]=24', (r: Rec) => (r.age ?? 0) > 24],
    ['age[gte]=24', (r: Rec) => (r.age ?? 0) >= 24],
    ['age[lt]=22', (r: Rec) => (r.age ?? 0) < 22],
    ['age[lte]=22', (r: Rec) => (r.age ?? 0) <= 22],
    ['tier[in]=pro,gold&age=20', (r: Rec) => ['pro', 'gold'].includes(r.tier) && r.age === 20],
    ['name[prefix]=n1', (r: Rec) => r.name.startsWith('n1')],
    ['name[contains]=5', (r: Rec) => r.name.includes('5')],
    ['tags[contains]=even', (r: Rec & { tags: string[] }) => r.tags.includes('even')],
  ] as const)('%s', async (query, pred) => {
    expect(await names(query)).toEqual(expected(pred as (r: Rec & { tags: string[] }) => boolean));
  });

  it.each([
    'note=x',
    'nope=1',
    'tier[like]=pro',
    'age[gt]=abc',
    'tier=platinum',
    'name;DROP TABLE customer=1',
    "name=a' OR 1=1--&name=b",
  ])('%s is 400 invalid_filter', async (query) => {
    const r = await list(query);
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('invalid_filter');
  });
});

describe('sorting', () => {
  it('multi-key sort, ascending and descending', async () => {
    const r = await list('sort=-age,name&limit=50');
    const want = [...all]
      .sort((a, b) => (b.age ?? 0) - (a.age ?? 0) || a.name.localeCompare(b.name))
      .slice(0, 50)
      .map((x) => x.id);
    expect(r.body.data.map((d: Rec) => d.id)).toEqual(want);
  });

  it.each(['note', 'secret', 'name;DROP TABLE customer', '(CASE WHEN 1=1 THEN id END)', '1'])(
    'sort=%s is 400 invalid_sort',
    async (sort) => {
      const r = await list(`sort=${encodeURIComponent(sort)}`);
      expect(r.status).toBe(400);
      expect(r.body.code).toBe('invalid_sort');
    },
  );
});

describe('cursor pagination', () => {
  it.each(['sort=createdAt', 'sort=-createdAt', 'sort=tier', 'sort=-tier,name', 'sort=city', 'sort=-city'])(
    '%s walks all 55 records exactly once, 10 a page',
    async (sort) => {
      const ids = await walk(`limit=10&${sort}`);
      expect(ids).toHaveLength(55);
      expect(new Set(ids).size).toBe(55);
    },
  );

  it('inserting while paging (createdAt asc) neither duplicates nor skips existing rows', async () => {
    const before = new Set((await walk('limit=50&sort=createdAt')).slice());
    let n = 0;
    const ids = await walk('limit=10&sort=createdAt', async () => {
      await Promise.all(
        [0, 1].map(() => call(s.url, 'POST', '/customers', { json: { name: `late${n++}`, tier: 'free' } })),
      );
    });
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of before) expect(ids).toContain(id);
  });

  it('a tampered or foreign cursor is 400 invalid_cursor', async () => {
    const first = await list('limit=10&sort=name');
    const cursor: string = first.body.nextCursor;
    const forged = Buffer.from(JSON.stringify({ s: 'name', k: [{ $gt: '' }, 'x'] })).toString('base64url');
    for (const bad of [`${cursor.slice(0, -3)}zzz`, 'not a cursor!', forged, 'A'.repeat(5000)]) {
      const r = await list(`limit=10&sort=name&cursor=${encodeURIComponent(bad)}`);
      expect(r.status, bad.slice(0, 20)).toBe(400);
      expect(r.body.code).toBe('invalid_cursor');
    }
    const otherSort = await list(`limit=10&sort=-name&cursor=${cursor}`);
    expect(otherSort.body.code).toBe('invalid_cursor');
  });

  it('limit above the max is 400 limit_exceeded; nonsense limits are 400', async () => {
    const r = await list('limit=1000000');
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('limit_exceeded');
    for (const bad of ['-1', '0', 'NaN', '1e3']) expect((await list(`limit=${bad}`)).status).toBe(400);
  });
});

describe('expand and count', () => {
  it('count=true adds total; expand=customer inlines the record', async () => {
    const counted = await list('tier=pro&count=true&limit=5');
    expect(counted.body.total).toBe(all.filter((r) => r.tier === 'pro').length);
    expect(counted.body.data).toHaveLength(5);
    expect((await list('limit=5')).body.total).toBeUndefined();

    const owner = all[3] as Rec;
    const o = await call(s.url, 'POST', '/orders', { json: { customer: owner.id } });
    expect(o.status).toBe(201);
    const plain = await call(s.url, 'GET', `/orders?customer=${owner.id}`);
    expect(plain.body.data[0].customer).toBe(owner.id);
    const expanded = await call(s.url, 'GET', `/orders?customer=${owner.id}&expand=customer`);
    expect(expanded.body.data[0].customer).toMatchObject({ id: owner.id, name: owner.name });
    const bad = await call(s.url, 'GET', '/orders?expand=secret');
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('invalid_expand');
  });
});
