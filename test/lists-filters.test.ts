import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem } from './helpers/bad-input-spec.ts';
import { call, type Served, serveSpec } from './helpers/serve-spec.ts';

const SPEC = `
ninefold: 1
service: { name: filters, title: Filters, purpose: String filters and list query parsing over HTTP. }
resources:
  Team:
    idPrefix: tea
    fields:
      name: { type: string, required: true }
  Person:
    idPrefix: per
    fields:
      name: { type: string, required: true }
      handle: { type: string, unique: true }
      tier: { type: enum, values: [free, pro] }
      age: { type: integer }
      born: { type: date }
      seen: { type: datetime }
      tags: { type: array, items: { type: string } }
      team: { type: ref, to: Team }
endpoints:
  Team:
    path: /teams
  Person:
    path: /people
    list:
      filter: [name, handle, tier, age, born, seen, tags, team, createdAt]
      sort: [name, age, createdAt]
      expand: [team]
      pageSize: { default: 10, max: 100 }
`;

// Case twins, accents, the Turkish dotted capital I, the German sharp s, and every LIKE and GLOB wildcard.
const NAMES = [
  'Alice',
  'alice',
  'ALICE',
  'Alicia',
  'Álvaro',
  'álvaro',
  'ÁLVARO',
  'Straße',
  'STRASSE',
  'İstanbul',
  'istanbul',
  'Zoë',
  'ZOË',
  'a_b',
  'axb',
  'a%b',
  'a*b',
  'a?b',
  'a[b]',
  'a\\b',
  'h-bob',
  'h-Bob',
];

let s: Served;
beforeAll(async () => {
  s = await serveSpec(SPEC);
  for (const name of NAMES) {
    const json = name.startsWith('h-') ? { name, handle: name.slice(2) } : { name };
    expect((await call(s.url, 'POST', '/people', { json })).status).toBe(201);
  }
});
afterAll(() => s.close({ remove: true }));

const get = (query: string) => call(s.url, 'GET', `/people?${query}`);
const names = async (query: string): Promise<string[]> => {
  const r = await get(`${query}&sort=name&limit=100`);
  expect(r.status, `${query}: ${r.text}`).toBe(200);
  return r.body.data.map((p: { name: string }) => p.name);
};
/** What the docs promise for the i-operators: A–Z fold to a–z, every other character compares as it is. */
const fold = (text: string) => text.replace(/[A-Z]/g, (c) => c.toLowerCase());
/** SQLite's BINARY order of these names (all in the BMP) is JavaScript's default order. */
const sorted = (list: string[]) => [...list].sort();

describe('string filters: exact by default, ASCII case folding on request', () => {
  const MODEL: Record<string, (name: string, value: string) => boolean> = {
    eq: (n, v) => n === v,
    prefix: (n, v) => n.startsWith(v),
    contains: (n, v) => n.includes(v),
    ieq: (n, v) => fold(n) === fold(v),
    iprefix: (n, v) => fold(n).startsWith(fold(v)),
    icontains: (n, v) => fold(n).includes(fold(v)),
  };
  const VALUES = ['al', 'Al', 'AL', 'alice', 'ALICE', 'Á', 'á', 'álvaro', 'ß', 'SS', 'strasse', 'İ', 'i', 'ist', 'ë'];
  const WILDCARDS = ['a_', 'a%', 'a*', 'a?', 'a[', 'b]', '%', '_', '*', '?', '[', '\\', 'a\\'];

  it.each(Object.keys(MODEL))(
    'name[%s] matches exactly what the documented rule says, wildcards included',
    async (op) => {
      const model = MODEL[op] as (n: string, v: string) => boolean;
      for (const value of [...VALUES, ...WILDCARDS]) {
        const got = await names(`name[${op}]=${encodeURIComponent(value)}`);
        expect(got, `name[${op}]=${value}`).toEqual(sorted(NAMES.filter((n) => model(n, value))));
      }
    },
  );

  it('prefix and contains agree with eq and with unique (bob and Bob are two handles): all tell case apart', async () => {
    expect(await names('name[prefix]=al')).toEqual(['alice']);
    expect(await names('name[contains]=LIC')).toEqual(['ALICE']);
    expect(await names('handle[prefix]=bo')).toEqual(['h-bob']);
    expect(await names('handle=bob')).toEqual(['h-bob']);
    expect(await names('handle[ieq]=BOB')).toEqual(['h-Bob', 'h-bob']);
  });

  it('folding is ASCII only: accented, Turkish and German letters compare as they are', async () => {
    expect(await names('name[ieq]=alice')).toEqual(['ALICE', 'Alice', 'alice']);
    // Á has no ASCII case, so ÁLVARO and Álvaro fold to the same text and álvaro does not.
    expect(await names(`name[ieq]=${encodeURIComponent('ÁLVARO')}`)).toEqual(['ÁLVARO', 'Álvaro']);
    expect(await names(`name[ieq]=${encodeURIComponent('álvaro')}`)).toEqual(['álvaro']);
    expect(await names('name[ieq]=ISTANBUL')).toEqual(['istanbul']);
    expect(await names(`name[iprefix]=${encodeURIComponent('zoë')}`)).toEqual(['Zoë']);
    expect(await names(`name[icontains]=${encodeURIComponent('ß')}`)).toEqual(['Straße']);
  });
});

describe('operators are allow-listed per field type', () => {
  it.each([
    'age[prefix]=2',
    'age[ieq]=2',
    'tier[contains]=o',
    'tier[iprefix]=p',
    'tags[eq]=x',
    'tags[prefix]=x',
    'tags[icontains]=x',
    'born[contains]=19',
    'team[prefix]=tea',
    'name[gt]=m',
    'name[like]=a',
  ])('%s → 400 invalid_filter', async (query) => {
    expectProblem(await get(query), 400, 'invalid_filter');
  });

  it.each(['name[prefix]=', 'name[contains]=', 'name[iprefix]=', 'name[icontains]=', 'handle[prefix]='])(
    '%s (an empty value matches everything, so it is a mistake) → 400 invalid_filter',
    async (query) => {
      expectProblem(await get(query), 400, 'invalid_filter');
    },
  );

  it('an empty value is still a value where it can match: name= finds names that are empty', async () => {
    expect(await names('name=')).toEqual([]);
    expect(await names('name[ne]=')).toHaveLength(NAMES.length);
  });

  it.each([
    'born[gt]=1',
    'born=2024-13-01',
    'born=19900101',
    'seen[gt]=March%207',
    'createdAt[gt]=1',
    'createdAt=2024',
  ])('%s (not an RFC 3339 date or time) → 400 invalid_filter', async (query) => {
    expectProblem(await get(query), 400, 'invalid_filter');
  });

  it('RFC 3339 dates and times filter', async () => {
    expect(await names('born[gte]=1990-01-01')).toEqual([]);
    expect(await names('createdAt[lt]=2999-01-01T00:00:00Z')).toHaveLength(NAMES.length);
  });
});

describe('sort, limit, cursor, count and expand refuse empty and repeated values', () => {
  it.each(['sort=', 'sort=,', 'sort=,,,', 'sort=name,,createdAt', 'sort=-', 'sort=name,', 'sort=name,-name'])(
    '%s → 400 invalid_sort',
    async (query) => {
      expectProblem(await get(query), 400, 'invalid_sort');
    },
  );

  it.each([
    ['limit=', 'invalid_query'],
    ['count=', 'invalid_query'],
    ['cursor=', 'invalid_cursor'],
    ['expand=', 'invalid_expand'],
    ['expand=team,', 'invalid_expand'],
    ['expand=team,team', 'invalid_expand'],
    ['limit=1&limit=2', 'invalid_query'],
    ['sort=name&sort=age', 'invalid_query'],
    ['name=a&name=b', 'invalid_filter'],
  ])('%s → 400 %s', async (query, code) => {
    expectProblem(await get(query), 400, code);
  });

  it('the well-formed forms still answer', async () => {
    expect((await get('sort=-age,name&limit=5&count=true&expand=team')).status).toBe(200);
    expect((await get('sort=%20name%20,%20-age%20')).status).toBe(200);
  });
});

describe('the OpenAPI document lists exactly the operators that work', () => {
  const OPERATORS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'prefix', 'contains', 'ieq', 'iprefix', 'icontains'];
  const VALUE: Record<string, string> = {
    id: 'per_x',
    name: 'Alice',
    handle: 'bob',
    tier: 'pro',
    age: '20',
    born: '1990-01-01',
    seen: '2024-01-01T00:00:00Z',
    tags: 'x',
    team: 'tea_x',
    createdAt: '2024-01-01T00:00:00Z',
  };

  it('every filter parameter of GET /people answers 200; every other operator answers 400', async () => {
    const doc = (await call(s.url, 'GET', '/openapi.json')).body;
    const params: Array<{ name: string }> = doc.paths['/people'].get.parameters.filter(
      (p: { name?: string }) => p.name !== undefined,
    );
    const listed = new Set(params.map((p) => p.name));
    for (const name of ['name', 'name[eq]', 'name[contains]', 'name[ieq]', 'name[iprefix]', 'name[icontains]'])
      expect(listed, name).toContain(name);
    for (const [field, value] of Object.entries(VALUE)) {
      for (const op of OPERATORS) {
        const key = `${field}[${op}]`;
        const r = await get(`${encodeURIComponent(key)}=${encodeURIComponent(value)}`);
        expect(r.status, `${key}: ${r.text}`).toBe(listed.has(key) ? 200 : 400);
      }
    }
  });
});
