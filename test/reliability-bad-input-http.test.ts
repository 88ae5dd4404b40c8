import { gzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BAD_INPUT_SPEC, expectProblem } from './helpers/bad-input-spec.ts';
import { withCpuMs } from './helpers/cpu-time.ts';
import { call, LEAKS, rawRequest, rawSend, type Served, serveSpec } from './helpers/serve-spec.ts';

let s: Served;
let rowsBefore = 0;
let host = '';
beforeAll(async () => {
  s = await serveSpec(BAD_INPUT_SPEC);
  host = new URL(s.url).host;
});
afterAll(() => s.close({ remove: true }));
beforeEach(async () => {
  rowsBefore = await s.countRows('user');
});
afterEach(async () => {
  expect(await s.countRows('user')).toBe(rowsBefore);
  expect((await call(s.url, 'GET', '/healthz')).status).toBe(200);
});

/** The status line of a raw answer, and the answer must not leak internals. */
const statusOf = (answer: string): number => {
  expect(answer).not.toMatch(LEAKS);
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0);
};
const BODY = '{"name":"smuggled"}';

describe('B6 oversize bodies', () => {
  it('a body over the 1 MB limit → 413 payload_too_large', async () => {
    const big = JSON.stringify({ name: 'a', data: 'x'.repeat(1_100_000) });
    expectProblem(
      await call(s.url, 'POST', '/users', { body: big, headers: { 'content-type': 'application/json' } }),
      413,
      'payload_too_large',
    );
  });

  it('Content-Length claiming more than the limit → 413 before the body is read', async () => {
    const answer = await rawRequest(
      s.url,
      `POST /users HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: 50000000\r\n\r\n{"name":`,
    );
    expect(statusOf(answer)).toBe(413);
  });

  it('Content-Length longer than the body sent: no answer is a success, nothing is written', async () => {
    const answer = await rawRequest(
      s.url,
      `POST /users HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: 100\r\nConnection: close\r\n\r\n${BODY}`,
      800,
    );
    expect(statusOf(answer) === 0 || statusOf(answer) >= 400).toBe(true);
  });

  it('Content-Length shorter than the body: the body is cut, the rest is a bad request', async () => {
    const answer = await rawRequest(
      s.url,
      `POST /users HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: 8\r\n\r\n${BODY}`,
    );
    const statuses = [...answer.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));
    expect(statuses[0]).toBe(400);
    expect(statuses.every((st) => st >= 400)).toBe(true);
    expect(answer).not.toMatch(LEAKS);
  });

  it('chunked with no length, growing past the limit → 413 while streaming', async () => {
    const chunk = 'x'.repeat(64 * 1024);
    let bytes = `POST /users HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
    bytes += `9\r\n{"name":"\r\n`;
    for (let i = 0; i < 20; i++) bytes += `${chunk.length.toString(16)}\r\n${chunk}\r\n`;
    bytes += '2\r\n"}\r\n0\r\n\r\n';
    expect(statusOf(await rawRequest(s.url, bytes))).toBe(413);
  });

  it('a small chunked body is accepted like any other (and then removed from the count)', async () => {
    const answer = await rawRequest(
      s.url,
      `POST /users HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${BODY.length.toString(16)}\r\n${BODY}\r\n0\r\n\r\n`,
    );
    expect(statusOf(answer)).toBe(201);
    rowsBefore += 1;
  });

  it('a gzip bomb → 415 (documented variant: no Content-Encoding is accepted, nothing is inflated)', async () => {
    const bomb = gzipSync(Buffer.from(JSON.stringify({ name: 'a', data: '0'.repeat(20_000_000) })));
    const r = await rawSend(s.url, 'POST', '/users', bomb, {
      'content-type': 'application/json',
      'content-encoding': 'gzip',
    });
    expectProblem(r, 415, 'unsupported_media_type');
  });
});

describe('B7 oversize headers, URL and query', () => {
  it('a 1 MB header → 431 from Node', async () => {
    const answer = await rawRequest(
      s.url,
      `GET /users HTTP/1.1\r\nHost: ${host}\r\nX-Big: ${'a'.repeat(1_000_000)}\r\n\r\n`,
    );
    expect(statusOf(answer)).toBe(431);
  });

  it('a 100 KB URL → 431 from Node (documented variant of 414: the request line counts against the header limit)', async () => {
    const answer = await rawRequest(s.url, `GET /users?name=${'a'.repeat(100_000)} HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
    expect(statusOf(answer)).toBe(431);
  });

  it('10k query parameters → 431 from Node (documented variant: the query counts against the header limit)', async () => {
    const q = Array.from({ length: 10_000 }, (_, i) => `p${i}=1`).join('&');
    expect(statusOf(await rawRequest(s.url, `GET /users?${q} HTTP/1.1\r\nHost: ${host}\r\n\r\n`))).toBe(431);
  });

  it('2k query parameters over the URL limit (default 8 KiB) → 414 uri_too_long', async () => {
    const q = Array.from({ length: 2_000 }, (_, i) => `p${i}`).join('&');
    expectProblem(await call(s.url, 'GET', `/users?${q}`), 414, 'uri_too_long');
  });

  it('1k query parameters under the URL limit → 400 invalid_filter, fast', async () => {
    const q = Array.from({ length: 1_000 }, (_, i) => `p${i}`).join('&');
    const { result, cpuMs } = await withCpuMs(() => call(s.url, 'GET', `/users?${q}`));
    expectProblem(result, 400, 'invalid_filter');
    expect(cpuMs).toBeLessThan(1000);
  });
});

describe('B14 path traversal', () => {
  it.each([
    '/users/..%2f..%2fetc%2fpasswd',
    '/users/%2e%2e/%2e%2e/etc/passwd',
    '/users/%252e%252e%252fetc%252fpasswd',
    '/users/..\\..\\etc\\passwd',
    '/users/usr_%00',
    '/users/a%2fb',
    '/../../etc/passwd',
  ])('GET %s → 400 or 404, never a file or another record', async (path) => {
    const answer = await rawRequest(s.url, `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
    expect([400, 404]).toContain(statusOf(answer));
    expect(answer).not.toContain('root:');
  });
});

describe('B16 HTTP parsing edge cases', () => {
  it('Content-Length together with Transfer-Encoding → 400 from Node, nothing smuggled', async () => {
    const smuggle = `GET /users HTTP/1.1\r\nHost: ${host}\r\n\r\n`;
    const body = `0\r\n\r\n${smuggle}`;
    const answer = await rawRequest(
      s.url,
      `POST /users HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nTransfer-Encoding: chunked\r\n\r\n${body}`,
    );
    expect(statusOf(answer)).toBe(400);
    expect(answer.match(/HTTP\/1\.1 /g)).toHaveLength(1);
  });

  it('two different Content-Length headers → 400 from Node', async () => {
    const answer = await rawRequest(
      s.url,
      `POST /users HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${BODY.length}\r\nContent-Length: 5\r\n\r\n${BODY}`,
    );
    expect(statusOf(answer)).toBe(400);
  });

  it('X-HTTP-Method-Override is ignored: a GET stays a GET', async () => {
    const created = await call(s.url, 'POST', '/users', { json: { name: 'kept' } });
    rowsBefore += 1;
    const r = await call(s.url, 'GET', `/users/${created.body.id}`, {
      headers: { 'x-http-method-override': 'DELETE', 'x-method-override': 'PATCH' },
    });
    expect(r.status).toBe(200);
    expect((await call(s.url, 'GET', `/users/${created.body.id}`)).status).toBe(200);
  });
});
