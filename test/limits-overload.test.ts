import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../src/parts/auth/keys.ts';
import { sampleEventLoopLag } from '../src/parts/limits/overload.ts';
import { buildPlan } from '../src/plan/build-plan.ts';
import { checkSource } from '../src/spec/check.ts';
import { parseSpecText } from '../src/spec/load.ts';
import { expectProblem } from './helpers/bad-input-spec.ts';
import { call, type Served, servePlan, serveSpec } from './helpers/serve-spec.ts';
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

// The critical routes' share of the process: at most `reserve` of their requests in flight while overloaded.
const HELD = `
const g = globalThis;
g.__held = [];
export const report = async ({ query }) => {
  if (query.hold) await new Promise((resolve) => { g.__held.push(resolve); });
  return { ok: true };
};
`;
const RESERVE_SPEC = `
ninefold: 1
service: { name: reserve-test }
resources:
  Item:
    fields: { name: { type: string, required: true } }
endpoints:
  Item: { operations: [list] }
  custom:
    - name: report
      method: GET
      path: /report
      handler: ./handlers.mjs#report
      request: { query: { hold: { type: string } } }
      response: { fields: { ok: { type: boolean } } }
limits:
  overload: { lag: 200ms, critical: ["GET /report"], reserve: 2 }
`;

describe('the reserve of the critical routes (limits.overload.reserve)', () => {
  const g = globalThis as { __held?: Array<() => void> };
  const releaseOne = () => {
    const next = g.__held?.shift();
    if (!next) throw new Error('no request is held');
    next();
  };
  let r: Served;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ninefold-reserve-'));
    writeFileSync(join(dir, 'handlers.mjs'), HELD);
    const checked = checkSource({ ...parseSpecText(RESERVE_SPEC, join(dir, 'service.yaml')), dir });
    if (!checked.spec) throw new Error(JSON.stringify(checked.diagnostics));
    r = await servePlan(buildPlan(checked.spec, dir), { eventLoopLag: () => lag });
  });
  afterAll(async () => {
    for (const release of g.__held ?? []) release();
    await r.close({ remove: true });
    rmSync(dir, { recursive: true, force: true });
  });

  it('while overloaded, serves a critical route up to its reserve at once, sheds it past that, and serves it again once one is answered', async () => {
    lag = 500;
    try {
      const held = [call(r.url, 'GET', '/report?hold=1'), call(r.url, 'GET', '/report?hold=1')];
      await waitFor(
        () => g.__held?.length === 2,
        () => `two held requests (${g.__held?.length})`,
      );
      const past = await call(r.url, 'GET', '/report');
      expectProblem(past, 503, 'overloaded');
      expect(past.headers.get('retry-after')).toBe('2');
      // The health checks are not counted against the reserve, and other routes are shed as before.
      expect((await call(r.url, 'GET', '/healthz')).status).toBe(200);
      expectProblem(await call(r.url, 'GET', '/items'), 503, 'overloaded');
      releaseOne();
      expect((await held[0])?.status).toBe(200);
      // One of the two places is free again: the next critical request is served, still overloaded.
      const served = await call(r.url, 'GET', '/report');
      expect([served.status, served.body.ok]).toEqual([200, true]);
      releaseOne();
      expect((await held[1])?.status).toBe(200);
    } finally {
      lag = 0;
    }
  });

  it('not overloaded, a critical route is not limited by its reserve', async () => {
    const held = [1, 2, 3].map(() => call(r.url, 'GET', '/report?hold=1'));
    await waitFor(
      () => g.__held?.length === 3,
      () => `three held requests (${g.__held?.length})`,
    );
    expect((await call(r.url, 'GET', '/report')).status).toBe(200);
    for (const release of g.__held?.splice(0) ?? []) release();
    expect((await Promise.all(held)).map((h) => h.status)).toEqual([200, 200, 200]);
    // The held requests were counted while they ran: once they are answered, overloaded, the reserve is whole.
    lag = 500;
    try {
      await waitFor(
        async () => (await call(r.url, 'GET', '/report')).status === 200,
        () => 'the reserve freed',
      );
    } finally {
      lag = 0;
    }
  });
});

describe('the OpenAPI document', () => {
  it('says which operations may answer 503 overloaded: the critical routes too (past their reserve), not the health checks', async () => {
    const doc = (await call(s.url, 'GET', '/openapi.json', { headers })).body;
    const examples = (path: string) =>
      Object.keys(doc.paths[path].get.responses['503']?.content?.['application/problem+json']?.examples ?? {});
    expect(examples('/items')).toEqual(expect.arrayContaining(['overloaded', 'timeout']));
    // A critical route is shed too, past its reserve.
    expect(examples('/items/{id}')).toEqual(expect.arrayContaining(['overloaded', 'timeout']));
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
