import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../src/parts/auth/keys.ts';
import { buildPlan } from '../src/plan/build-plan.ts';
import { checkSource } from '../src/spec/check.ts';
import { parseSpecText } from '../src/spec/load.ts';
import { call, LEAKS, planOf, rawRequest, rawSend, type Served, servePlan, tempDbPath } from './helpers/serve-spec.ts';
import { waitFor } from './helpers/wait-for.ts';

// Issue 14 §1–2: one pipeline for every route, and the wire. Each case here failed before the pipeline.
const SPEC = `
ninefold: 1
service: { name: wire-test }
resources:
  Ticket:
    fields:
      title: { type: string, required: true }
      owner: { type: string }
      hook: { type: string, format: uri }
    states:
      initial: open
      transitions:
        close: { from: open, to: closed }
        reopen: { from: closed, to: open }
auth:
  schemes: { key: { type: apiKey, in: header, name: X-Api-Key } }
  require: [key]
  roles: { agent: Works tickets., admin: Manages keys. }
  rules: { Ticket: { owner: owner } }
events:
  auto: true
  webhooks: { allowPrivateTargets: true }
  callbacks: { Ticket: { field: hook, events: [Ticket.closed] } }
endpoints:
  Ticket: { operations: [list, get, create, update, delete] }
`;

const problemOf = (r: { status: number; headers: Headers; text: string; body: { code?: string } }) => ({
  status: r.status,
  type: r.headers.get('content-type'),
  code: r.body?.code,
});

describe('one pipeline for every route', () => {
  let s: Served;
  let key: string;
  let adminKey: string;
  beforeAll(async () => {
    s = await servePlan(planOf(SPEC));
    key = (await issueApiKey(s.store, { roles: ['agent'], subject: 'ann' })).key;
    adminKey = (await issueApiKey(s.store, { roles: ['admin'], subject: 'root' })).key;
  });
  afterAll(() => s.close({ remove: true }));

  it('broken JSON without a credential is 401 on generated and built-in routes alike, before the body is read', async () => {
    for (const path of ['/tickets', '/webhook-endpoints', '/_ninefold/keys']) {
      const r = await call(s.url, 'POST', path, { body: '{"broken', headers: { 'content-type': 'application/json' } });
      expect(problemOf(r), path).toEqual({
        status: 401,
        type: 'application/problem+json; charset=utf-8',
        code: 'unauthenticated',
      });
      expect(r.headers.get('www-authenticate'), path).toContain('ApiKey');
    }
    // A caller without the admin role learns nothing from the body of a key request either.
    const r = await call(s.url, 'POST', '/_ninefold/keys', {
      body: '{"broken',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
    });
    expect(problemOf(r).code).toBe('forbidden');
  });

  it('every built-in route asks for credentials the same way', async () => {
    for (const path of [
      '/events',
      '/events/evt_x',
      '/events/stream',
      '/webhook-endpoints',
      '/_ninefold/keys',
      '/_ninefold/callbacks',
    ]) {
      const r = await call(s.url, 'GET', path);
      expect([r.status, r.body.code], path).toEqual([401, 'unauthenticated']);
      expect(r.headers.get('x-content-type-options'), path).toBe('nosniff');
    }
    // The admin routes answer an admin, and refuse anyone else before doing anything.
    for (const path of ['/_ninefold/keys', '/_ninefold/callbacks']) {
      expect((await call(s.url, 'GET', path, { headers: { 'x-api-key': adminKey } })).status, path).toBe(200);
      expect((await call(s.url, 'GET', path, { headers: { 'x-api-key': key } })).body.code, path).toBe('forbidden');
    }
  });

  it('Idempotency-Key works on built-in routes: a retried webhook registration is replayed, not registered twice', async () => {
    const headers = { 'x-api-key': key, 'idempotency-key': 'we-1' };
    const json = { url: 'http://127.0.0.1:9/hook' };
    const first = await call(s.url, 'POST', '/webhook-endpoints', { json, headers });
    const again = await call(s.url, 'POST', '/webhook-endpoints', { json, headers });
    expect(first.status).toBe(201);
    expect([again.status, again.body.id, again.headers.get('idempotent-replayed')]).toEqual([
      201,
      first.body.id,
      'true',
    ]);
    const list = await call(s.url, 'GET', '/webhook-endpoints', { headers: { 'x-api-key': key } });
    expect(list.body.data.filter((e: { url: string }) => e.url === json.url)).toHaveLength(1);
  });

  it('JSON with charset=utf-8 (OkHttp, .NET) is accepted on every write; another charset is 415', async () => {
    const h = (type: string) => ({ 'x-api-key': key, 'content-type': type });
    for (const type of [
      'application/json; charset=utf-8',
      'application/json;charset=UTF-8',
      'application/json; charset="utf-8"',
    ]) {
      const created = await call(s.url, 'POST', '/tickets', { body: '{"title":"a"}', headers: h(type) });
      expect(created.status, type).toBe(201);
      const patched = await call(s.url, 'PATCH', `/tickets/${created.body.id}`, {
        body: '{"title":"b"}',
        headers: h(type),
      });
      expect(patched.status, type).toBe(200);
      const closed = await call(s.url, 'POST', `/tickets/${created.body.id}/close`, { body: '{}', headers: h(type) });
      expect(closed.status, type).toBe(200);
    }
    const merge = await call(s.url, 'POST', '/tickets', {
      body: '{"title":"m"}',
      headers: h('application/merge-patch+json'),
    });
    expect(merge.status).toBe(201);
    for (const type of ['application/json; charset=latin1', 'text/plain', 'application/x-www-form-urlencoded']) {
      const r = await call(s.url, 'POST', '/tickets', { body: '{"title":"a"}', headers: h(type) });
      expect([r.status, r.body.code], type).toEqual([415, 'unsupported_media_type']);
    }
  });

  it('an empty body sent as JSON: routes without a body accept it; routing and authentication answer first', async () => {
    const created = await call(s.url, 'POST', '/tickets', { json: { title: 'empty' }, headers: { 'x-api-key': key } });
    const id = created.body.id as string;
    const empty = { 'content-type': 'application/json', 'content-length': '0' };
    const send = (method: string, path: string, headers: Record<string, string>) =>
      rawSend(s.url, method, path, '', { ...empty, ...headers });
    expect((await send('POST', `/tickets/${id}/close`, { 'x-api-key': key })).status).toBe(200);
    expect((await send('DELETE', `/tickets/${id}`, {})).status).toBe(401);
    expect((await send('POST', '/no/such/path', {})).status).toBe(404);
    expect((await send('DELETE', `/tickets/${id}`, { 'x-api-key': key })).status).toBe(204);
    // A route that takes a body still says the empty one is not JSON, after authentication.
    expect((await send('POST', '/tickets', {})).status).toBe(401);
    const create = await send('POST', '/tickets', { 'x-api-key': key });
    expect([create.status, JSON.parse(create.text).code]).toEqual([400, 'invalid_json']);
  });

  it('a path segment over 256 characters is a catalogued 414 that does not echo the path', async () => {
    const long = 'a'.repeat(300);
    const r = await call(s.url, 'GET', `/tickets/${long}`, { headers: { 'x-api-key': key } });
    expect(problemOf(r)).toEqual({
      status: 414,
      type: 'application/problem+json; charset=utf-8',
      code: 'uri_too_long',
    });
    expect(r.text).not.toContain(long);
    expect(r.text).not.toMatch(LEAKS);
  });

  it('a Content-Length shorter than the body: both answers are catalogued problems', async () => {
    const body = '{"title":"short"}';
    const text = await rawRequest(
      s.url,
      `POST /tickets HTTP/1.1\r\nhost: x\r\nx-api-key: ${key}\r\ncontent-type: application/json\r\ncontent-length: 5\r\n\r\n${body}`,
    );
    // The bytes past Content-Length are not a request: the connection ends with a catalogued 400 (Node's parser may
    // meet them before the first request is answered, which then goes unanswered on this connection).
    const answers = text.split(/(?=HTTP\/1\.1 )/);
    expect(answers.length).toBeGreaterThan(0);
    for (const a of answers) {
      expect(a.slice(9, 12)).toBe('400');
      expect(a).toMatch(/content-type: application\/problem\+json/i);
      expect(a).not.toMatch(LEAKS);
    }
    expect(answers.at(-1)).toContain('"code":"bad_request"');
    expect(answers.at(-1)).toMatch(/connection: close/i);
  });

  it('headers over 16 KiB are a catalogued 431', async () => {
    const text = await rawRequest(s.url, `GET /tickets HTTP/1.1\r\nhost: x\r\nx-big: ${'b'.repeat(20_000)}\r\n\r\n`);
    expect(text.slice(9, 12)).toBe('431');
    expect(text).toContain('"code":"request_header_fields_too_large"');
  });

  it('JSON answers say nosniff; answers for a caller are not for shared caches; public ones may be', async () => {
    const mine = await call(s.url, 'GET', '/tickets', { headers: { 'x-api-key': key } });
    expect(mine.headers.get('x-content-type-options')).toBe('nosniff');
    expect(mine.headers.get('cache-control')).toBe('no-store');
    const problem = await call(s.url, 'GET', '/tickets');
    expect(problem.headers.get('x-content-type-options')).toBe('nosniff');
    const health = await call(s.url, 'GET', '/healthz');
    expect(health.headers.get('x-content-type-options')).toBe('nosniff');
    expect(health.headers.get('cache-control')).toBeNull();
  });

  it('the docs pages carry a Content-Security-Policy that runs only their own scripts, and refuse framing', async () => {
    for (const path of ['/docs/spec', '/docs/']) {
      const r = await call(s.url, 'GET', path);
      expect(r.status, path).toBe(200);
      expect(r.headers.get('x-frame-options'), path).toBe('DENY');
      const csp = r.headers.get('content-security-policy') ?? '';
      expect(csp, path).toContain("frame-ancestors 'none'");
      expect(csp, path).toContain("default-src 'none'");
      expect(csp, path).not.toContain("script-src 'self' 'unsafe-inline'");
      const scripts = [...r.text.matchAll(/<script([^>]*)>/g)].map((m) => m[1] ?? '');
      expect(scripts.length, path).toBeGreaterThan(0);
      if (path === '/docs/') {
        const nonce = /'nonce-([^']+)'/.exec(csp)?.[1];
        expect(nonce).toBeDefined();
        for (const attrs of scripts.filter((a) => !a.includes('src='))) expect(attrs).toContain(`nonce="${nonce}"`);
      } else expect(csp).toMatch(/'sha256-[A-Za-z0-9+/=]+'/);
    }
  });

  it('405 still answers before authentication, with Allow', async () => {
    const r = await call(s.url, 'PUT', '/tickets');
    expect([r.status, r.body.code, r.headers.get('allow')]).toEqual([405, 'method_not_allowed', 'GET, POST']);
  });
});

// A handler that waits until the test lets it go, to run past the request's budget.
const SLOW_HANDLERS = `
export const slow = async (ctx) => {
  await ctx.emit('Note.flagged', { note: 'late' });
  await new Promise((resolve) => { globalThis.__releaseSlow = resolve; });
  globalThis.__slowDone = true;
  return { ok: true };
};
export const watch = async (ctx) => {
  await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve));
  globalThis.__aborted = true;
  return { ok: true };
};
`;
const SLOW_SPEC = `
ninefold: 1
service: { name: budget-test }
resources:
  Note:
    fields: { text: { type: string } }
events:
  declared:
    Note.flagged: { payload: { note: { type: string, required: true } } }
endpoints:
  Note: { operations: [list, create] }
  custom:
    - { name: slow, method: POST, path: /slow, handler: ./handlers.mjs#slow, response: { fields: { ok: { type: boolean } } } }
    - { name: watch, method: GET, path: /watch, handler: ./handlers.mjs#watch, response: { fields: { ok: { type: boolean } } } }
limits:
  # The marker write of the first test has a budget of its own: on a loaded machine its first call (which also
  # compiles its validator) may take longer than the 300 ms under test.
  timeouts: { request: 300ms, endpoints: { "POST /notes": 30s } }
`;

describe("the spec's request budget (limits.timeouts.request)", () => {
  let s: Served;
  let dir: string;
  const g = globalThis as { __releaseSlow?: () => void; __aborted?: boolean; __slowDone?: boolean };
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ninefold-budget-'));
    writeFileSync(join(dir, 'handlers.mjs'), SLOW_HANDLERS);
    const checked = checkSource({ ...parseSpecText(SLOW_SPEC, join(dir, 'service.yaml')), dir });
    if (!checked.spec) throw new Error(JSON.stringify(checked.diagnostics));
    s = await servePlan(buildPlan(checked.spec, dir));
  });
  afterAll(async () => {
    await s.close({ remove: true });
    rmSync(dir, { recursive: true, force: true });
  });

  it('past its budget a write answers 503 timeout at once; what it did afterwards never commits', async () => {
    const r = await call(s.url, 'POST', '/slow', { json: {} });
    expect([r.status, r.body.code, r.headers.get('retry-after')]).toEqual([503, 'timeout', '1']);
    await waitFor(() => g.__releaseSlow !== undefined, 'the slow handler to be waiting');
    g.__releaseSlow?.();
    // The handler finished after the answer: its event was rolled back with its transaction. A marker request
    // through the same store proves the slow one has had its turn.
    await waitFor(() => g.__slowDone === true, 'the slow handler to finish');
    expect((await call(s.url, 'POST', '/notes', { json: { text: 'marker' } })).status).toBe(201);
    expect(await s.store.events.lastSeq()).toBe(0);
    expect(await s.countRows('_ninefold_events')).toBe(0);
  });

  it("a handler can watch the budget through its deadline's AbortSignal", async () => {
    const r = await call(s.url, 'GET', '/watch');
    expect(r.status).toBe(503);
    await waitFor(() => g.__aborted === true, "the handler's signal to abort");
  });

  it('a request within its budget is served as usual', async () => {
    expect((await call(s.url, 'POST', '/notes', { json: { text: 'quick' } })).status).toBe(201);
  });
});

describe('Idempotency-Key records', () => {
  const IDEM_SPEC = `
ninefold: 1
service: { name: idem-purge }
resources:
  Note: { fields: { text: { type: string } } }
endpoints:
  Note: { operations: [create] }
`;
  it('are kept 24 hours, then purged (a sweep runs at start and every 10 minutes)', async () => {
    const dbPath = tempDbPath();
    const plan = planOf(IDEM_SPEC);
    const t0 = Date.parse('2026-11-01T10:00:00Z');
    let now = t0;
    const clock = () => new Date(now);
    let s = await servePlan(plan, { dbPath, now: clock });
    const headers = { 'idempotency-key': 'k-1' };
    const first = await call(s.url, 'POST', '/notes', { json: { text: 'one' }, headers });
    expect(first.status).toBe(201);
    await s.close();

    now = t0 + 23 * 3_600_000; // within 24 h: still replayed
    s = await servePlan(plan, { dbPath, now: clock });
    const replay = await call(s.url, 'POST', '/notes', { json: { text: 'one' }, headers });
    expect([replay.body.id, replay.headers.get('idempotent-replayed')]).toEqual([first.body.id, 'true']);
    await s.close();

    now = t0 + 24 * 3_600_000 + 60_000; // past 24 h: the sweep at start purges it
    s = await servePlan(plan, { dbPath, now: clock });
    await waitFor(
      async () => (await s.countRows('_ninefold_idempotency')) === 0,
      'the sweep at start to purge the old key',
    );
    const fresh = await call(s.url, 'POST', '/notes', { json: { text: 'another body' }, headers });
    expect(fresh.status).toBe(201);
    expect(fresh.body.id).not.toBe(first.body.id);
    await s.close({ remove: true });
  });
});

describe('background work never fails silently', () => {
  const TIMER_SPEC = `
ninefold: 1
service: { name: worker-health }
resources:
  Job:
    fields: { name: { type: string } }
    states:
      initial: queued
      transitions:
        expire: { from: queued, to: expired, after: 1h }
endpoints:
  Job: { operations: [create, get] }
`;
  it('a failing worker is logged and shown in /readyz as degraded; its recovery too', async () => {
    const lines: string[] = [];
    let broken = false;
    const s = await servePlan(planOf(TIMER_SPEC), {
      timerPollMs: 20,
      logLevel: 'info',
      logStream: { write: (line) => void lines.push(line) },
      store: (store) =>
        new Proxy(store, {
          get(target, property, receiver) {
            const value = Reflect.get(target, property, receiver);
            if (property !== 'stateLog') return typeof value === 'function' ? value.bind(target) : value;
            return {
              ...target.stateLog,
              claimDue: (...args: Parameters<typeof target.stateLog.claimDue>) => {
                if (broken) throw Object.assign(new Error('SELECT boom FROM secrets'), { code: 'SQLITE_IOERR_READ' });
                return target.stateLog.claimDue(...args);
              },
            };
          },
        }),
    });
    try {
      // Ready once the store is (on PostgreSQL, once its listening connection is up: just after start it may not be).
      await waitFor(async () => (await call(s.url, 'GET', '/readyz')).body.status === 'ready', '/readyz to say ready');
      const ready = await call(s.url, 'GET', '/readyz');
      expect(Object.keys(ready.body.workers).sort()).toEqual(['idempotency', 'timers']);
      broken = true;
      await waitFor(
        async () => (await call(s.url, 'GET', '/readyz')).body.status === 'degraded',
        '/readyz to say degraded',
      );
      const degraded = await call(s.url, 'GET', '/readyz');
      expect(degraded.status).toBe(200);
      expect(degraded.body.workers.timers).toMatchObject({
        state: 'failing',
        lastError: 'firing due timers: SQLITE_IOERR_READ',
      });
      expect(degraded.text).not.toContain('SELECT');
      const logged = lines.map((l) => JSON.parse(l)).filter((l) => l.worker === 'timers' && l.level === 50);
      expect(logged.length).toBe(1); // once, not once per poll
      broken = false;
      await waitFor(async () => (await call(s.url, 'GET', '/readyz')).body.status === 'ready', '/readyz to say ready');
      expect(lines.some((l) => l.includes('"worker":"timers"') && l.includes('working again'))).toBe(true);
    } finally {
      await s.close({ remove: true });
    }
  });
});

describe('the request logger', () => {
  const PLAIN = `
ninefold: 1
service: { name: log-test }
resources:
  Note:
    fields: { text: { type: string, required: true } }
endpoints:
  Note: { operations: [create, get] }
`;
  // Each request's logger is made when it first logs (request-logger.ts): it must still carry the request's id.
  it('an unhandled error is logged with the request id the caller sent, a request that does not log writes nothing', async () => {
    const lines: string[] = [];
    const s = await servePlan(planOf(PLAIN), {
      logLevel: 'warn',
      logStream: { write: (line) => void lines.push(line) },
      store: (store) =>
        new Proxy(store, {
          get(target, property, receiver) {
            const value = Reflect.get(target, property, receiver);
            if (property === 'get')
              return () => {
                throw new Error('the disk caught fire');
              };
            return typeof value === 'function' ? value.bind(target) : value;
          },
        }),
    });
    try {
      const before = lines.length;
      const made = await call(s.url, 'POST', '/notes', {
        json: { text: 'hello' },
        headers: { 'x-request-id': 'quiet-1' },
      });
      expect(made.status).toBe(201);
      expect(lines.slice(before).filter((l) => l.includes('quiet-1'))).toEqual([]);
      const failed = await call(s.url, 'GET', `/notes/${made.body.id}`, { headers: { 'x-request-id': 'loud-1' } });
      expect(failed.status).toBe(500);
      const logged = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'unhandled error');
      expect(logged).toHaveLength(1);
      expect(logged[0]).toMatchObject({ reqId: 'loud-1', level: 50, err: { message: 'the disk caught fire' } });
    } finally {
      await s.close();
    }
  });
});
