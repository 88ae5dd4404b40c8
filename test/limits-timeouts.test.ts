import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPlan } from '../src/plan/build-plan.ts';
import { checkSource } from '../src/spec/check.ts';
import { parseSpecText } from '../src/spec/load.ts';
import { call, LEAKS, type Served, servePlan } from './helpers/serve-spec.ts';
import { waitFor } from './helpers/wait-for.ts';

// Issue 18 item 5 (RELIABILITY L8, L9): time budgets per route, and slow clients cut off at the declared times.
// The durations are small so that nothing waits long; no assertion depends on how fast the machine is, only on
// what cannot happen before a declared time.

const HANDLERS = `
const g = globalThis;
export const slow = async (ctx) => {
  await ctx.records.Note.create({ text: 'early' });
  await ctx.emit('Note.flagged', { note: 'early' });
  await new Promise((resolve) => { g.__releaseSlow = resolve; });
  await ctx.records.Note.create({ text: 'late' });
  await ctx.emit('Note.flagged', { note: 'late' });
  g.__slowDone = true;
  return { ok: true };
};
export const watch = async (ctx) => {
  await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve));
  g.__aborted = true;
  return { ok: true };
};
export const patient = async () => {
  g.__patientWaiting = true;
  await new Promise((resolve) => { g.__releasePatient = resolve; });
  return { ok: true };
};
`;
const SPEC = `
ninefold: 1
service: { name: timeouts-test }
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
    - { name: patient, method: GET, path: /patient, handler: ./handlers.mjs#patient, response: { fields: { ok: { type: boolean } } } }
limits:
  timeouts:
    request: 1h
    headers: 300ms
    body: 600ms
    endpoints: { "POST /slow": 250ms, "GET /watch": 100ms }
`;
const g = globalThis as {
  __releaseSlow?: () => void;
  __slowDone?: boolean;
  __aborted?: boolean;
  __patientWaiting?: boolean;
  __releasePatient?: () => void;
};

let s: Served;
let dir: string;
let port = 0;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ninefold-timeouts-'));
  writeFileSync(join(dir, 'handlers.mjs'), HANDLERS);
  const checked = checkSource({ ...parseSpecText(SPEC, join(dir, 'service.yaml')), dir });
  if (!checked.spec) throw new Error(JSON.stringify(checked.diagnostics));
  s = await servePlan(buildPlan(checked.spec, dir));
  port = Number(new URL(s.url).port);
});
afterAll(async () => {
  await s.close({ remove: true });
  rmSync(dir, { recursive: true, force: true });
});

describe('time budgets per route (limits.timeouts.endpoints, L8)', () => {
  it('past its own budget a write answers 503 timeout; nothing it did, before or after, commits or emits', async () => {
    const r = await call(s.url, 'POST', '/slow', { json: {} });
    expect([r.status, r.body.code, r.headers.get('retry-after')]).toEqual([503, 'timeout', '1']);
    expect(r.text).not.toMatch(LEAKS);
    await waitFor(() => g.__releaseSlow !== undefined, 'the slow handler to be waiting');
    g.__releaseSlow?.();
    await waitFor(() => g.__slowDone === true, 'the slow handler to finish');
    // A write after it goes through the same store: by then the late one has rolled back.
    expect((await call(s.url, 'POST', '/notes', { json: { text: 'marker' } })).status).toBe(201);
    expect(await s.countRows('note')).toBe(1);
    expect(await s.countRows('_ninefold_events')).toBe(0);
    const notes = await call(s.url, 'GET', '/notes');
    expect(notes.body.data.map((n: { text: string }) => n.text)).toEqual(['marker']);
  });

  it("a handler sees its route's budget run out on ctx.signal", async () => {
    const r = await call(s.url, 'GET', '/watch');
    expect([r.status, r.body.code]).toEqual([503, 'timeout']);
    await waitFor(() => g.__aborted === true, "the handler's signal to abort");
  });

  it('a route without its own budget keeps the spec-wide one, however long another route takes', async () => {
    const patient = call(s.url, 'GET', '/patient');
    await waitFor(() => g.__patientWaiting === true, 'the patient handler to start');
    // The slow route's budget passes in full while the patient one waits: its own (1 h) has not.
    Object.assign(g, { __releaseSlow: undefined, __slowDone: false });
    expect((await call(s.url, 'POST', '/slow', { json: {} })).status).toBe(503);
    g.__releasePatient?.();
    expect(await patient).toMatchObject({ status: 200, body: { ok: true } });
    await waitFor(() => g.__releaseSlow !== undefined, 'the second slow handler to be waiting');
    g.__releaseSlow?.();
    await waitFor(() => g.__slowDone === true, 'the second slow handler to finish');
  });
});

/** A raw connection: what it was answered, when it was closed (ms after it opened). */
const slowClient = (first: string) => {
  const socket: Socket = connect(port, '127.0.0.1');
  const opened = performance.now();
  const state = { answer: '', closedAfterMs: -1 };
  socket.on('data', (c) => {
    state.answer += c.toString('utf8');
  });
  socket.on('error', () => {});
  socket.on('close', () => {
    state.closedAfterMs = performance.now() - opened;
  });
  socket.on('connect', () => socket.write(first));
  return { socket, state };
};

describe('slow clients (limits.timeouts.headers, limits.timeouts.body, L9)', () => {
  it('Node looks for slow clients often enough to cut them within a tenth of the shorter time-out (not every 30 s)', () => {
    const server = s.app.server as typeof s.app.server & { connectionsCheckingInterval: number; maxHeaderSize: number };
    expect([server.headersTimeout, server.requestTimeout, server.connectionsCheckingInterval]).toEqual([300, 600, 30]);
  });

  it('headers that never finish: 408 request_timeout, then the connection is closed, not before the declared time', async () => {
    const { state } = slowClient('GET /notes HTTP/1.1\r\nHost: x\r\nX-Slow: a');
    await waitFor(() => state.closedAfterMs >= 0, 'the slow-headers connection to be closed');
    expect(state.closedAfterMs).toBeGreaterThanOrEqual(300);
    expect(state.answer.slice(0, 12)).toBe('HTTP/1.1 408');
    expect(state.answer).toContain('"code":"request_timeout"');
    expect(state.answer).toMatch(/connection: close/i);
  });

  it('a body that never finishes: 408 once the whole request is overdue, not at the headers time-out', async () => {
    const { state } = slowClient(
      'POST /notes HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"text":',
    );
    await waitFor(() => state.closedAfterMs >= 0, 'the slow-body connection to be closed');
    expect(state.closedAfterMs).toBeGreaterThanOrEqual(600);
    expect(state.answer).toContain('"code":"request_timeout"');
    expect(await s.countRows('note')).toBe(1);
  });

  it('while 100 slow connections trickle headers, other clients are served; then every slow one is closed', async () => {
    const clients = Array.from({ length: 100 }, () => slowClient('GET /notes HTTP/1.1\r\nHost: x\r\n'));
    const trickle = setInterval(() => {
      for (const c of clients) if (!c.socket.destroyed) c.socket.write('X-A: b\r\n');
    }, 50);
    try {
      for (let i = 0; i < 5; i++) expect((await call(s.url, 'GET', '/notes')).status).toBe(200);
      await waitFor(() => clients.every((c) => c.state.closedAfterMs >= 0), 'every slow connection to be closed');
      const unanswered = clients.filter((c) => !c.state.answer.includes('"code":"request_timeout"'));
      expect(unanswered.map((c) => c.state)).toEqual([]);
    } finally {
      clearInterval(trickle);
    }
  });
});
