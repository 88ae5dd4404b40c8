import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectProblem } from './helpers/bad-input-spec.ts';
import { call, LEAKS, rawRequest, type Served, serveSpec } from './helpers/serve-spec.ts';

// Issue 18 item 4 (RELIABILITY B6, B7, B8, B15, L10): every size the spec declares holds, over HTTP, with a
// catalogued problem that names the limit, and nothing is stored.
const SPEC = `
ninefold: 1
service: { name: sizes-test }
resources:
  Item:
    fields:
      name: { type: string, required: true }
      tags: { type: array, items: { type: string } }
      data: { type: json }
endpoints:
  Item: { operations: [list, get, create, update] }
limits:
  size:
    body: 64kb
    items: 50
    depth: 8
    pageSize: 10
    url: 1kb
    headers: 4kb
    endpoints: { "PATCH /items/{id}": 1kb }
`;

let s: Served;
let host = '';
let id = '';
let rowsBefore = 0;
beforeAll(async () => {
  s = await serveSpec(SPEC);
  host = new URL(s.url).host;
  id = (await call(s.url, 'POST', '/items', { json: { name: 'first' } })).body.id;
});
afterAll(() => s.close({ remove: true }));
beforeEach(async () => {
  rowsBefore = await s.countRows('item');
});
afterEach(async () => {
  expect(await s.countRows('item')).toBe(rowsBefore);
});

const statusOf = (answer: string) => {
  expect(answer).not.toMatch(LEAKS);
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0);
};
const bodyOf = (answer: string) => JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
const padded = (bytes: number) => JSON.stringify({ name: 'x'.repeat(bytes) });

describe('body size per endpoint (limits.size.body, limits.size.endpoints)', () => {
  it('a route with its own limit answers 413 naming it; the same body is fine where the default applies', async () => {
    const body = padded(2_000);
    const r = await call(s.url, 'PATCH', `/items/${id}`, { body, headers: { 'content-type': 'application/json' } });
    expectProblem(r, 413, 'payload_too_large');
    expect(r.body.detail).toBe('The request body is larger than 1 KiB, the limit of this endpoint.');
    const created = await call(s.url, 'POST', '/items', { body, headers: { 'content-type': 'application/json' } });
    expect(created.status).toBe(201);
    rowsBefore += 1;
  });

  it('the spec-wide limit names its own size', async () => {
    const r = await call(s.url, 'POST', '/items', {
      body: padded(70_000),
      headers: { 'content-type': 'application/json' },
    });
    expectProblem(r, 413, 'payload_too_large');
    expect(r.body.detail).toContain('64 KiB');
  });

  it('a Content-Length over the limit is answered before any of the body is sent', async () => {
    const answer = await rawRequest(
      s.url,
      `PATCH /items/${id} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n`,
    );
    expect(statusOf(answer)).toBe(413);
    expect(bodyOf(answer).code).toBe('payload_too_large');
  });

  it('a chunked body that never ends is cut once it passes the limit', async () => {
    let bytes = `PATCH /items/${id} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
    for (let i = 0; i < 3; i++) bytes += `200\r\n${'x'.repeat(0x200)}\r\n`;
    // No last chunk: only cutting the stream at 1 KiB can answer this request.
    const answer = await rawRequest(s.url, bytes);
    expect(statusOf(answer)).toBe(413);
  });
});

describe('what a body holds (limits.size.items, limits.size.depth)', () => {
  it('an array over the item cap is 400 too_many_items, at the top or nested in a json field', async () => {
    const over = Array.from({ length: 51 }, (_, i) => `t${i}`);
    const top = await call(s.url, 'POST', '/items', { json: { name: 'a', tags: over } });
    expectProblem(top, 400, 'too_many_items');
    expect(top.body.detail).toContain('50');
    const nested = await call(s.url, 'POST', '/items', { json: { name: 'a', data: { deep: [over] } } });
    expectProblem(nested, 400, 'too_many_items');
    const fits = await call(s.url, 'POST', '/items', { json: { name: 'a', tags: over.slice(1) } });
    expect(fits.status).toBe(201);
    rowsBefore += 1;
  });

  it('nesting past the declared depth is 400 too_deep', async () => {
    const deep = `{"name":"d","data":${'['.repeat(8)}${']'.repeat(8)}}`;
    expectProblem(
      await call(s.url, 'POST', '/items', { body: deep, headers: { 'content-type': 'application/json' } }),
      400,
      'too_deep',
    );
  });
});

describe('page size (limits.size.pageSize)', () => {
  it('a page larger than the cap is 400 limit_exceeded with the largest allowed; the cap itself is served', async () => {
    const r = await call(s.url, 'GET', '/items?limit=11');
    expectProblem(r, 400, 'limit_exceeded');
    expect(r.body.maxLimit).toBe(10);
    expect((await call(s.url, 'GET', '/items?limit=10')).status).toBe(200);
  });
});

describe('URL and header sizes (limits.size.url, limits.size.headers)', () => {
  it('a request target over the URL limit is 414 uri_too_long naming it, without echoing the URL', async () => {
    const long = `/items?x=${'a'.repeat(1_100)}`;
    for (const path of [long, `/nowhere${long}`, `/items${'/aaaaaaaaaa'.repeat(110)}`]) {
      const r = await call(s.url, 'GET', path);
      expectProblem(r, 414, 'uri_too_long');
      expect(r.body.detail).toBe('The request target is longer than 1 KiB.');
      expect(r.text).not.toContain('aaaa');
      expect([r.headers.get('x-content-type-options'), r.headers.get('x-request-id')?.length]).toEqual(['nosniff', 36]);
    }
    // Just under the limit the request is routed as usual (here: to no route).
    const under = `/nowhere${'/abcdefghij'.repeat(90)}`;
    expect([under.length < 1024, (await call(s.url, 'GET', under)).body.code]).toEqual([true, 'not_found']);
  });

  it('headers over the declared size are a catalogued 431 naming it; below it they are served', async () => {
    const answer = await rawRequest(
      s.url,
      `GET /items HTTP/1.1\r\nHost: ${host}\r\nX-Big: ${'b'.repeat(5_000)}\r\n\r\n`,
    );
    expect(statusOf(answer)).toBe(431);
    expect(answer).toMatch(/content-type: application\/problem\+json/i);
    expect(bodyOf(answer)).toMatchObject({
      code: 'request_header_fields_too_large',
      detail: 'The request line and headers are over 4 KiB.',
    });
    const fits = await call(s.url, 'GET', '/items', { headers: { 'x-big': 'b'.repeat(3_000) } });
    expect(fits.status).toBe(200);
  });
});

describe('the OpenAPI document', () => {
  it('documents 408, 413 and 414 where they apply', async () => {
    const doc = (await call(s.url, 'GET', '/openapi.json')).body;
    const statuses = (path: string, method: string) => Object.keys(doc.paths[path][method].responses);
    expect(statuses('/items/{id}', 'patch')).toEqual(expect.arrayContaining(['400', '408', '413', '414', '503']));
    expect(statuses('/items', 'get')).toEqual(expect.arrayContaining(['414', '503']));
    expect(statuses('/items', 'get')).not.toContain('413');
    const problems = doc.paths['/items'].post.responses['400'].content['application/problem+json'].examples;
    expect(Object.keys(problems)).toEqual(expect.arrayContaining(['too_deep', 'too_many_items']));
  });
});
