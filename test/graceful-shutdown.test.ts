import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { Client, Pool } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { type CliServer, startCliServer } from './helpers/cli-server.ts';
import { awaiting, waitFor } from './helpers/wait-for.ts';

// Issue 16: a SIGTERM under load used to reset connections that had requests on them already (37–165 of 360
// requests sent before the signal got no answer). Every request a client sent before the signal now gets a real
// answer, and the process exits 0 with every acknowledged write on disk.
const SPEC = `
ninefold: 1
service: { name: drain }
resources:
  Note: { fields: { title: { type: string, required: true } } }
endpoints:
  Note: { operations: [list, get, create] }
`;

const dir = mkdtempSync(join(tmpdir(), 'ninefold-drain-'));
const spec = join(dir, 'service.yaml');
writeFileSync(spec, SPEC);
const servers: CliServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  rmSync(dir, { recursive: true, force: true });
});

const exitOf = (server: CliServer) =>
  new Promise<number | null>((done) => {
    if (server.child.exitCode !== null) done(server.child.exitCode);
    else server.child.once('exit', (code) => done(code));
  });

interface Answer {
  readonly status: number;
  readonly retryAfter?: string | string[];
  readonly error?: string;
  /** Answered after the load stopped (the signal). */
  readonly late: boolean;
}

/** The ids (X-Request-Id) of the requests undici has written whole to a socket, from now until `stop()`. */
const watchSent = () => {
  const sent = new Set<string>();
  const onSent = (message: unknown) => {
    const headers = (message as { request: { headers: string[] } }).request.headers;
    const id = headers[headers.indexOf('x-request-id') + 1];
    if (id) sent.add(id);
  };
  subscribe('undici:request:bodySent', onSent);
  return { sent, stop: () => unsubscribe('undici:request:bodySent', onSent) };
};

/**
 * Keeps `connections × pipelining` requests on the way to the server through an undici pool until `stop()` (undici
 * pipelines GETs only: POSTs wait for the answer before them). Each request's id is its X-Request-Id.
 */
const loadOf = (url: string, method: 'GET' | 'POST', connections: number, pipelining: number) => {
  const pool = new Pool(url, { connections, pipelining });
  let stopped = false;
  let answered = 0;
  const answers = new Map<string, Answer>();
  const pending: Promise<void>[] = [];
  let next = 0;
  const send = (): void => {
    const id = `${method}-${next++}`;
    const request = pool
      .request(
        method === 'POST'
          ? {
              method,
              path: '/notes',
              headers: { 'content-type': 'application/json', 'x-request-id': id },
              body: JSON.stringify({ title: id }),
            }
          : { method, path: '/notes?limit=5', headers: { 'x-request-id': id } },
      )
      .then(
        async (r) => {
          await r.body.text();
          answers.set(id, { status: r.statusCode, retryAfter: r.headers['retry-after'], late: stopped });
        },
        (error: Error & { code?: string }) =>
          void answers.set(id, { status: 0, error: error.code ?? error.message, late: stopped }),
      )
      .then(() => {
        answered++;
        if (!stopped) send();
      });
    pending.push(request);
  };
  for (let i = 0; i < connections * pipelining; i++) send();
  return {
    answered: () => answered,
    /** Sends no more requests. */
    stop() {
      stopped = true;
    },
    /** Every answer, once all requests have settled. */
    async settled() {
      await Promise.all(pending);
      await pool.close();
      return answers;
    },
  };
};

describe('SIGTERM under load', () => {
  it('answers every request sent before the signal (none reset), exits 0, and loses no acknowledged write', async () => {
    const db = join(dir, 'drain.db');
    const server = await startCliServer(spec, ['--db', db]);
    servers.push(server);
    // 120 writes, one per connection, and 240 reads pipelined 30 deep on 8 more: 360 requests on the way.
    const sent = watchSent();
    const writes = loadOf(server.url, 'POST', 120, 1);
    const reads = loadOf(server.url, 'GET', 8, 30);
    const loads = [writes, reads];
    const answeredSoFar = () => writes.answered() + reads.answered();
    await waitFor(
      () => answeredSoFar() >= 1000,
      () => `load under way (${answeredSoFar()} answered)`,
    );
    const exited = exitOf(server);
    for (const load of loads) load.stop();
    const sentBeforeSignal = [...sent.sent];
    server.child.kill('SIGTERM');
    const answers = new Map(
      (await awaiting(Promise.all(loads.map((load) => load.settled())), 'every answer')).flatMap((a) => [...a]),
    );
    sent.stop();

    // The signal came while requests sent before it still waited for their answers (else this tests nothing).
    expect(sentBeforeSignal.filter((id) => answers.get(id)?.late).length).toBeGreaterThan(10);
    const answeredForReal = (a: Answer | undefined) =>
      a?.status === 200 || a?.status === 201 || (a?.status === 503 && a.retryAfter !== undefined);
    expect(
      sentBeforeSignal.filter((id) => !answeredForReal(answers.get(id))).map((id) => [id, answers.get(id)]),
    ).toEqual([]);
    expect(await awaiting(exited, 'the process to exit')).toBe(0);

    // Every acknowledged write is there at the next start.
    const again = await startCliServer(spec, ['--db', db]);
    servers.push(again);
    const list = await fetch(`${again.url}/notes?count=true&limit=1`).then(
      (r) => r.json() as Promise<{ total: number }>,
    );
    expect(list.total).toBeGreaterThanOrEqual([...answers.values()].filter((a) => a.status === 201).length);
  });

  it('while draining: /readyz answers 503 shutting_down, a request being received is answered, a new connection is served and closed, none once it has exited', async () => {
    const db = join(dir, 'readiness.db');
    const server = await startCliServer(spec, ['--db', db]);
    servers.push(server);
    const upload = new PassThrough();
    const uploader = new Client(server.url);
    const created = uploader.request({
      method: 'POST',
      path: '/notes',
      headers: { 'content-type': 'application/json' },
      body: upload,
    });
    upload.write('{"title":');
    const probe = new Client(server.url);
    // A second connection, answered once before the signal and idle since: see below.
    const spare = new Client(server.url);
    const ready = async (client = probe) => {
      const r = await client.request({ method: 'GET', path: '/readyz' });
      return {
        status: r.statusCode,
        retryAfter: r.headers['retry-after'],
        connection: r.headers.connection,
        body: (await r.body.json()) as { code?: string },
      };
    };
    expect((await ready()).status).toBe(200);
    expect((await ready(spare)).status).toBe(200);

    const exited = exitOf(server);
    server.child.kill('SIGTERM');
    let answer = await ready();
    // Every answer from the signal on says Connection: close, so the probe's connection ends with its first one.
    await waitFor(async () => {
      if (answer.status === 200 && answer.connection !== 'close') answer = await ready();
      return answer.status !== 200 || answer.connection === 'close';
    }, 'readiness to fail');
    // A readiness request received just before the signal and answered after it says 200 and closes: the drain has
    // begun, and the spare connection (still open: an answered connection lasts its keep-alive time-out) asks again.
    if (answer.status === 200) answer = await ready(spare);
    expect(answer).toEqual({
      status: 503,
      retryAfter: '1',
      connection: 'close',
      body: expect.objectContaining({ code: 'shutting_down' }),
    });
    // A balancer that has not yet seen readiness fail may still connect: the listening socket stays open until nobody
    // has connected for a second (closing it sooner resets the connections the kernel queued for it, with the requests
    // written on them), and a new connection is served and told to close.
    const late = new Client(server.url);
    expect(await ready(late)).toEqual({
      status: 503,
      retryAfter: '1',
      connection: 'close',
      body: expect.objectContaining({ code: 'shutting_down' }),
    });

    upload.end('"sent before the signal"}');
    const response = await awaiting(created, 'the upload to be answered');
    expect(response.statusCode).toBe(201);
    await response.body.dump();
    expect(await awaiting(exited, 'the process to exit')).toBe(0);
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
    await Promise.all([uploader.close(), probe.close(), spare.close(), late.close()]);
  });

  it('while draining: every answer says Connection: close; an idle keep-alive connection stays open until its keep-alive time-out; exit 0', async () => {
    const server = await startCliServer(spec, ['--db', join(dir, 'keep-alive.db')]);
    servers.push(server);
    const { port } = new URL(server.url);
    /** A raw connection (no client of its own that would drop it when idle), and whether it is closed yet. */
    const raw = () => {
      const socket = connect(Number(port), '127.0.0.1');
      const state = { socket, text: '', closed: false };
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => {
        state.text += chunk;
      });
      socket.on('error', () => undefined);
      socket.on('close', () => {
        state.closed = true;
      });
      return state;
    };
    const idle = raw();
    idle.socket.write('GET /notes?limit=1 HTTP/1.1\r\nHost: drain\r\n\r\n');
    await waitFor(() => idle.text.includes('\r\n\r\n'), 'the answer on the keep-alive connection');
    expect(idle.text).toMatch(/keep-alive: timeout=5/i);
    const unused = raw();
    await waitFor(() => unused.socket.readyState === 'open', 'a connection that sends nothing');

    const client = new Client(server.url);
    const get = async () => {
      const r = await client.request({ method: 'GET', path: '/notes?limit=1' });
      await r.body.dump();
      return { status: r.statusCode, connection: r.headers.connection };
    };
    expect((await get()).status).toBe(200);
    // A second answer on the idle connection right before the signal: its keep-alive time-out (5 s) then runs from
    // here, well after the never-used connection's quiet close (about a second after the signal), on a slow machine too.
    idle.socket.write('GET /notes?limit=1 HTTP/1.1\r\nHost: drain\r\n\r\n');
    await waitFor(() => idle.text.split('HTTP/1.1 200').length === 3, 'the second answer on the keep-alive connection');
    const exited = exitOf(server);
    server.child.kill('SIGTERM');
    const answers: Array<{ status: number; connection?: string | string[] }> = [];
    // One request after the other on the one connection, until the server says it closes it (its first answer
    // once the signal is handled): a client told so sends nothing more on it, so nothing it sends meets the close.
    await waitFor(
      async () => {
        answers.push(await get());
        return answers.at(-1)?.connection === 'close';
      },
      () => `Connection: close (${answers.length} answers so far)`,
    );
    await client.close();
    expect(answers.every((a) => a.status === 200)).toBe(true);

    // The connection that never carried a request is closed once quiet; the one that did outlives it: a client may
    // still reuse it (for less than the advertised keep-alive time-out), and a close then would reset that request.
    await waitFor(() => unused.closed, 'the never-used connection to be closed');
    expect(idle.closed).toBe(false);
    await waitFor(() => idle.closed, 'the keep-alive connection to be closed at its time-out');
    expect(await awaiting(exited, 'the process to exit')).toBe(0);
  });
});
