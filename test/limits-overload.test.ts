import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../src/parts/auth/keys.ts';
import { sampleEventLoopLag } from '../src/parts/limits/overload.ts';
import { expectProblem } from './helpers/bad-input-spec.ts';
import { call, type Served, serveSpec } from './helpers/serve-spec.ts';
import { waitFor } from './helpers/wait-for.ts';

// Issue 18 item 6: past the declared event-loop lag, new requests are shed with 503 overloaded and Retry-After
// instead of queueing; the health checks and the declared critical routes keep answering. The lag is injected.
const SPEC = `
ninefold: 1
service: { name: overload-test }
resources:
  Item:
    fields: { name: { type: string, required: true } }
auth:
  schemes: { key: { type: apiKey, in: header, name: X-Api-Key } }
  require: [key]
  roles: { clerk: Keeps items. }
endpoints:
  Item: { operations: [list, get, create] }
limits:
  overload: { lag: 200ms, retryAfter: 3s, critical: ["GET /items/{id}"] }
`;

let s: Served;
let lag = 0;
let headers: Record<string, string> = {};
let id = '';
beforeAll(async () => {
  s = await serveSpec(SPEC, { eventLoopLag: () => lag });
  headers = { 'x-api-key': (await issueApiKey(s.store, { roles: ['clerk'], subject: 'cleo' })).key };
  id = (await call(s.url, 'POST', '/items', { json: { name: 'kept' }, headers })).body.id;
});
afterAll(() => s.close({ remove: true }));

describe('shedding on event-loop lag (limits.overload)', () => {
  it('past the declared lag, a request is refused at once with 503 overloaded and Retry-After', async () => {
    lag = 500;
    try {
      for (const [method, path] of [
        ['GET', '/items'],
        ['POST', '/items'],
        ['GET', '/nowhere'],
      ] as const) {
        const r = await call(s.url, method, path, { json: method === 'POST' ? { name: 'shed' } : undefined, headers });
        expectProblem(r, 503, 'overloaded');
        expect(r.headers.get('retry-after'), path).toBe('3');
        expect(r.headers.get('x-content-type-options'), path).toBe('nosniff');
      }
      // Before authentication: a caller without credentials costs no key lookup either.
      expectProblem(await call(s.url, 'GET', '/items'), 503, 'overloaded');
    } finally {
      lag = 0;
    }
    expect(await s.countRows('item')).toBe(1);
  });

  it('the health checks and the critical routes are served while overloaded', async () => {
    lag = 500;
    try {
      expect((await call(s.url, 'GET', '/healthz')).status).toBe(200);
      expect((await call(s.url, 'GET', '/readyz')).status).toBe(200);
      const critical = await call(s.url, 'GET', `/items/${id}`, { headers });
      expect([critical.status, critical.body.name]).toEqual([200, 'kept']);
      // A critical route still asks for credentials.
      expect((await call(s.url, 'GET', `/items/${id}`)).status).toBe(401);
    } finally {
      lag = 0;
    }
  });

  it('at the threshold and below it, requests are served; once the lag falls, they are served again', async () => {
    lag = 200;
    expect((await call(s.url, 'GET', '/items', { headers })).status).toBe(200);
    lag = 201;
    expect((await call(s.url, 'GET', '/items', { headers })).status).toBe(503);
    lag = 10;
    expect((await call(s.url, 'GET', '/items', { headers })).status).toBe(200);
  });
});

describe('the OpenAPI document', () => {
  it('says which operations may answer 503 overloaded: not the critical routes, not the health checks', async () => {
    const doc = (await call(s.url, 'GET', '/openapi.json', { headers })).body;
    const examples = (path: string) =>
      Object.keys(doc.paths[path].get.responses['503']?.content?.['application/problem+json']?.examples ?? {});
    expect(examples('/items')).toEqual(expect.arrayContaining(['overloaded', 'timeout']));
    expect(examples('/items/{id}')).not.toContain('overloaded');
    expect(examples('/items/{id}')).toContain('timeout');
    expect(JSON.stringify(doc.paths['/healthz'].get.responses)).not.toContain('overloaded');
  });
});

describe('the lag reading', () => {
  it('a sampled timer reads a blocked event loop as lag, before the I/O that queued meanwhile', async () => {
    const sampler = sampleEventLoopLag(10);
    try {
      await new Promise((r) => setTimeout(r, 30));
      const start = performance.now();
      // The one blocking wait of this suite: nothing else holds the loop the way a real overload does.
      while (performance.now() - start < 100) {
        /* busy */
      }
      await waitFor(
        () => sampler.lag() >= 80,
        () => `a lag of at least 80 ms (read ${sampler.lag()})`,
        1,
      );
    } finally {
      sampler.stop();
    }
  });

  it('a server with the real sampler sheds a request that arrived while the loop was blocked', async () => {
    const real = await serveSpec(SPEC.replace('lag: 200ms', 'lag: 50ms'));
    try {
      const { port } = new URL(real.url);
      const socket = connect(Number(port), '127.0.0.1');
      await new Promise((r) => socket.once('connect', r));
      let answer = '';
      socket.on('data', (c) => {
        answer += c.toString('utf8');
      });
      socket.write('GET /items HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      const start = performance.now();
      while (performance.now() - start < 150) {
        /* the loop is blocked while the request waits in the socket */
      }
      await new Promise((r) => socket.once('close', r));
      expect(answer.slice(0, 12)).toBe('HTTP/1.1 503');
      expect(answer).toContain('"code":"overloaded"');
    } finally {
      await real.close({ remove: true });
    }
  });
});
