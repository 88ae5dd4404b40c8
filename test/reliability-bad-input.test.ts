import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BAD_INPUT_SPEC, expectProblem } from './helpers/bad-input-spec.ts';
import { withCpuMs } from './helpers/cpu-time.ts';
import { call, LEAKS, rawSend, type Served, serveSpec } from './helpers/serve-spec.ts';

let s: Served;
let rowsBefore = 0;
beforeAll(async () => {
  s = await serveSpec(BAD_INPUT_SPEC);
});
afterAll(() => s.close({ remove: true }));
/** Every case below is refused, so no case may leave a row behind. */
beforeEach(async () => {
  rowsBefore = await s.countRows('user');
});
afterEach(async () => {
  expect(await s.countRows('user')).toBe(rowsBefore);
});

const post = (body: string, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
  call(s.url, 'POST', '/users', { body, headers });

describe('B1 malformed JSON', () => {
  it.each([
    ['truncated', '{"name":'],
    ['trailing comma', '{"name":"a",}'],
    ['single quotes', "{'name':'a'}"],
    ['NaN', '{"name":"a","age":NaN}'],
    ['Infinity', '{"name":"a","age":Infinity}'],
    ['comment', '{"name":"a" /* hi */}'],
    ['UTF-8 BOM', '\ufeff{"name":"a"}'],
    ['empty body', ''],
    ['two documents', '{"name":"a"}{"name":"b"}'],
  ])('%s → 400 invalid_json', async (_label, body) => {
    expectProblem(await post(body), 400, 'invalid_json');
  });
});

describe('B2 wrong or missing Content-Type', () => {
  it.each([
    ['form-encoded', 'application/x-www-form-urlencoded', 'name=a'],
    ['text/plain', 'text/plain', '{"name":"a"}'],
    ['JSON in latin1', 'application/json; charset=latin1', '{"name":"a"}'],
    ['multipart', 'multipart/form-data; boundary=x', '--x--'],
  ])('%s → 415 unsupported_media_type', async (_label, type, body) => {
    expectProblem(await post(body, { 'content-type': type }), 415, 'unsupported_media_type');
  });

  it('no Content-Type at all → 415 unsupported_media_type', async () => {
    const r = await rawSend(s.url, 'POST', '/users', '{"name":"a"}', {});
    expectProblem(r, 415, 'unsupported_media_type');
  });
});

describe('B3 wrong types', () => {
  it('every wrong field is reported at once with its pointer → 422 validation_failed', async () => {
    const r = await post(
      JSON.stringify({ name: null, age: '5', active: 'true', tags: { a: 1 }, role: 'root', born: '2026-13-01' }),
    );
    expectProblem(r, 422, 'validation_failed');
    const pointers = JSON.parse(r.text).errors.map((e: { pointer: string }) => e.pointer);
    for (const p of ['#/name', '#/age', '#/active', '#/tags', '#/role', '#/born']) expect(pointers).toContain(p);
  });

  it('1 for a string is not coerced → 422', async () => {
    expectProblem(await post('{"name":1}'), 422, 'validation_failed');
  });
});

describe('B4 unknown fields', () => {
  it('{"nmae": "x"} → 422 unknown_field', async () => {
    const r = await post('{"name":"a","nmae":"x"}');
    expectProblem(r, 422, 'unknown_field');
    expect(JSON.parse(r.text).errors[0].pointer).toBe('#/nmae');
  });

  it('85,000 unknown keys → 422 unknown_field with a bounded answer (bad-input-amplification.test.ts has more)', async () => {
    const keys = Array.from({ length: 85_000 }, (_, i) => `"k${i}":1`).join(',');
    const r = await post(`{"name":"a",${keys}}`);
    expectProblem(r, 422, 'unknown_field');
    expect(r.text.length).toBeLessThan(16 * 1024);
    expect(JSON.parse(r.text)).toMatchObject({ truncated: true });
  });
});

describe('B5 duplicate keys (documented variant: last wins, validator and storage see the same value)', () => {
  it('a valid value hidden behind an invalid first one is validated as the last one', async () => {
    const r = await post('{"name":"dup","age":"bad","age":7,"role":"user","role":"admin"}');
    expect(r.status).toBe(201);
    const stored = await call(s.url, 'GET', `/users/${JSON.parse(r.text).id}`);
    expect(stored.body).toMatchObject({ age: 7, role: 'admin' });
    rowsBefore += 1;
  });

  it('an invalid last value is refused even when the first was valid → 422', async () => {
    expectProblem(await post('{"name":"dup","age":7,"age":"bad"}'), 422, 'validation_failed');
  });
});

describe('B8 deep nesting', () => {
  it('100k-deep array inside the json field → 400 too_deep, fast; the server still answers', async () => {
    const depth = 100_000;
    const { result: r, cpuMs } = await withCpuMs(() =>
      post(`{"name":"deep","data":${'['.repeat(depth)}${']'.repeat(depth)}}`),
    );
    expectProblem(r, 400, 'too_deep');
    expect(cpuMs).toBeLessThan(2000);
    expect((await call(s.url, 'GET', '/healthz')).status).toBe(200);
  });

  it('1M-deep object nesting is over the body limit → 413 payload_too_large', async () => {
    const depth = 1_000_000;
    const r = await post(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`);
    expectProblem(r, 413, 'payload_too_large');
    expect((await call(s.url, 'GET', '/healthz')).status).toBe(200);
  });

  it('33 levels inside the json field (cap 32) → 400 too_deep', async () => {
    expectProblem(await post(`{"name":"deep","data":${'['.repeat(32)}${']'.repeat(32)}}`), 400, 'too_deep');
  });
});

describe('B9 unicode', () => {
  it.each([
    ['escaped lone surrogate', '{"name":"a\\ud800b"}'],
    ['escaped NUL', '{"name":"a\\u0000b"}'],
    ['NUL in a key', '{"na\\u0000me":"a"}'],
    ['lone surrogate inside the json field', '{"name":"a","data":{"x":["\\udfff"]}}'],
  ])('%s → 422 invalid_string', async (_label, body) => {
    expectProblem(await post(body), 422, 'invalid_string');
  });

  it.each([
    ['invalid UTF-8 byte', Buffer.from([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d])],
    [
      'overlong encoding of "/"',
      Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xc0, 0xaf]), Buffer.from('"}')]),
    ],
    ['CESU-8 surrogate', Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')])],
  ])('%s → 422 invalid_string', async (_label, bytes) => {
    expectProblem(await rawSend(s.url, 'POST', '/users', bytes), 422, 'invalid_string');
  });

  it('emoji, RTL override, zero-width and NFC/NFD forms round-trip byte-exact (no normalisation)', async () => {
    const names = ['😀👩🏽‍💻', 'abc\u202edcba', 'zero\u200bwidth\u200d', 'caf\u00e9', 'cafe\u0301'];
    for (const name of names) {
      const r = await post(JSON.stringify({ name, handle: name }));
      expect(r.status, name).toBe(201);
      const got = await call(s.url, 'GET', `/users/${JSON.parse(r.text).id}`);
      expect(Buffer.from(got.body.name, 'utf8').equals(Buffer.from(name, 'utf8'))).toBe(true);
      expect(got.body.handle).toBe(name);
      rowsBefore += 1;
    }
  });
});

describe('B10 huge numbers', () => {
  it.each([
    ['1e309 (Infinity in JS)', '1e309'],
    ['9007199254740993 (2^53+1)', '9007199254740993'],
    ['-9007199254740993', '-9007199254740993'],
  ])('%s for an integer → 422 number_out_of_range', async (_label, n) => {
    expectProblem(await post(`{"name":"n","age":${n}}`), 422, 'number_out_of_range');
  });

  it('a decimal given as a JSON number is refused; as a string it is exact', async () => {
    expectProblem(await post('{"name":"n","price":19.99}'), 422, 'validation_failed');
    const r = await post('{"name":"n","price":"12345678901234.99"}');
    expect(JSON.parse(r.text).price).toBe('12345678901234.99');
    rowsBefore += 1;
  });
});

describe('B11 prototype pollution', () => {
  it.each([
    ['__proto__', '{"name":"p","__proto__":{"isAdmin":true}}'],
    ['constructor.prototype', '{"name":"p","constructor":{"prototype":{"isAdmin":true}}}'],
    ['nested in an array', '{"name":"p","data":[{"__proto__":{"isAdmin":true}}]}'],
    ['nested in the json field', '{"name":"p","data":{"a":{"constructor":{"prototype":{"isAdmin":1}}}}}'],
  ])('%s in the body → 400 forbidden_key', async (_label, body) => {
    expectProblem(await post(body), 400, 'forbidden_key');
  });

  it.each(['__proto__[isAdmin]=1', 'a[__proto__][b]=1', 'constructor[prototype][isAdmin]=1'])(
    'query %s → 400 invalid_filter (documented variant: not a declared filter)',
    async (q) => {
      expectProblem(await call(s.url, 'GET', `/users?${q}`), 400, 'invalid_filter');
    },
  );

  it('fields named toString / hasOwnProperty are not fields → 422 unknown_field; nothing is polluted', async () => {
    expectProblem(await post('{"name":"p","toString":"x","hasOwnProperty":1}'), 422, 'unknown_field');
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('isAdmin');
  });
});

describe('B12 injection through sort and filter', () => {
  it.each(['name;DROP TABLE user', '(CASE WHEN 1=1 THEN id END)', '1', 'randomblob(1000000000)', ',,,', '-', ''])(
    'sort=%s → 400 invalid_sort',
    async (sort) => {
      expectProblem(await call(s.url, 'GET', `/users?sort=${encodeURIComponent(sort)}`), 400, 'invalid_sort');
    },
  );

  it('filter=…, fields=* and unknown operators → 400 invalid_filter', async () => {
    for (const q of ["filter=name eq 'a'' OR 1=1--'", 'fields=*', 'name[sleep]=5', 'name[like]=%25']) {
      expectProblem(await call(s.url, 'GET', `/users?${q.replaceAll(' ', '%20')}`), 400, 'invalid_filter');
    }
  });

  it("a value full of SQL is bound as data: name=' OR 1=1-- matches nothing, fast", async () => {
    const { cpuMs } = await withCpuMs(async () => {
      const r = await call(s.url, 'GET', `/users?name=${encodeURIComponent("' OR 1=1--")}`);
      expect(r.status).toBe(200);
      expect(r.body.data).toEqual([]);
      const blob = await call(s.url, 'GET', `/users?name=${encodeURIComponent("x' || randomblob(1000000000) || '")}`);
      expect(blob.body.data).toEqual([]);
    });
    expect(cpuMs).toBeLessThan(1000);
  });
});

describe('B13 filter oracle on hidden fields', () => {
  it('filtering or sorting on the write-only password → 400, and it is never in an answer', async () => {
    expectProblem(await call(s.url, 'GET', '/users?password[prefix]=a'), 400, 'invalid_filter');
    expectProblem(await call(s.url, 'GET', '/users?password[iprefix]=a'), 400, 'invalid_filter');
    expectProblem(await call(s.url, 'GET', '/users?sort=password'), 400, 'invalid_sort');
    const list = await call(s.url, 'GET', '/users?limit=50');
    expect(list.text).not.toContain('password');
  });
});

describe('B15 pagination abuse', () => {
  it.each([
    ['limit=1000000', 'limit_exceeded'],
    ['limit=-1', 'invalid_query'],
    ['limit=NaN', 'invalid_query'],
    [`cursor=${'A'.repeat(8_000)}`, 'invalid_cursor'],
    ['limit=', 'invalid_query'],
    ['cursor=', 'invalid_cursor'],
  ])('%s → 400', async (q, code) => {
    expectProblem(await call(s.url, 'GET', `/users?${q}`), 400, code);
  });

  it('a cursor that makes the URL longer than limits.size.url (default 8 KiB) → 414 uri_too_long', async () => {
    expectProblem(await call(s.url, 'GET', `/users?cursor=${'A'.repeat(10_000)}`), 414, 'uri_too_long');
  });
});

it('no answer above carried a stack, path, SQL or library name (spot check of a 404 and a 405)', async () => {
  for (const r of [await call(s.url, 'GET', '/users/usr_x'), await call(s.url, 'DELETE', '/users')]) {
    expect(r.text).not.toMatch(LEAKS);
  }
});
