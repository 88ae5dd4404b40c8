import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../src/parts/auth/keys.ts';
import { call, planOf, type Served, servePlan, TICKET_KEY_AUTH } from './helpers/serve-spec.ts';
import { eventually } from './helpers/serve-states.ts';

// The server-sent event stream, RELIABILITY.md E1–E6, over real HTTP.
const SPEC = `
ninefold: 1
service: { name: stream-test }
resources:
  Ticket:
    fields:
      title: { type: string, required: true }
      owner: { type: string }
      blob: { type: string, maxLength: 200000 }
${TICKET_KEY_AUTH}
events:
  auto: true
  stream: { heartbeat: 200ms, recheck: 300ms, maxPerCaller: 2 }
endpoints:
  Ticket: { operations: [list, get, create, update] }
`;

// No credentials: anonymous callers are counted by their address (loopback has many: 127.0.0.x).
const OPEN_SPEC = `
ninefold: 1
service: { name: stream-caps }
resources:
  Note:
    fields:
      text: { type: string, required: true }
events:
  auto: true
  stream: { maxPerCaller: 1, maxOpen: 2 }
endpoints:
  Note: { operations: [create] }
`;

interface Sse {
  readonly status: number;
  readonly headers: IncomingMessage['headers'];
  /** Everything received so far. */
  text(): string;
  /** The events received so far, parsed. */
  events(): Array<{ id: string; event: string; data: { id: string; type: string; data: Record<string, unknown> } }>;
  /** Resolves when the server ends the stream. */
  readonly ended: Promise<void>;
  close(): void;
}

const open = (url: string, headers: Record<string, string>, path = '/events/stream', from?: string): Promise<Sse> =>
  new Promise((resolve, reject) => {
    const req = httpRequest(`${url}${path}`, { headers, ...(from ? { localAddress: from } : {}) }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      const ended = new Promise<void>((ok) => res.on('close', () => ok()));
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        text: () => text,
        events: () =>
          text
            .split('\n\n')
            .slice(0, -1) // the last piece is still arriving (or empty)
            .filter((block) => block.startsWith('id: '))
            .map((block) => {
              const field = (name: string) =>
                block
                  .split('\n')
                  .find((l) => l.startsWith(`${name}: `))
                  ?.slice(name.length + 2) ?? '';
              return { id: field('id'), event: field('event'), data: JSON.parse(field('data')) };
            }),
        ended,
        close: () => req.destroy(),
      });
    });
    req.on('error', reject);
    req.end();
  });

/** Polls a condition every 20 ms, for up to `ms`. */
const until = (check: () => boolean, ms = 5000) => eventually(check, ms, 20);

let s: Served;
let ann: Record<string, string>;
let bob: Record<string, string>;
beforeAll(async () => {
  s = await servePlan(planOf(SPEC));
  ann = { 'x-api-key': (await issueApiKey(s.store, { subject: 'ann', roles: ['agent'] })).key };
  bob = { 'x-api-key': (await issueApiKey(s.store, { subject: 'bob', roles: ['agent'] })).key };
});
afterAll(() => s.close({ remove: true }));

const create = (headers: Record<string, string>, title: string, blob?: string) =>
  call(s.url, 'POST', '/tickets', { json: { title, ...(blob ? { blob } : {}) }, headers });

describe('the event stream', () => {
  it('E1: a reader that reconnects with Last-Event-ID gets every event it missed, in order, and nothing older', async () => {
    const first = await open(s.url, ann);
    expect(first.status).toBe(200);
    expect(first.headers['content-type']).toContain('text/event-stream');
    await create(ann, 'before');
    expect(await until(() => first.events().length === 1)).toBe(true);
    const last = first.events()[0]?.id as string;
    first.close();
    await first.ended;
    const made: string[] = [];
    for (let i = 0; i < 100; i++) made.push((await create(ann, `missed ${i}`)).body.id);
    const again = await open(s.url, { ...ann, 'last-event-id': last });
    expect(await until(() => again.events().length >= 100)).toBe(true);
    await new Promise((ok) => setTimeout(ok, 300));
    const got = again.events();
    expect(got.map((e) => (e.data.data.record as { id: string }).id)).toEqual(made);
    expect(got.every((e) => e.event === 'Ticket.created' && e.id > last)).toBe(true);
    again.close();

    // The same resume through the query, for clients that cannot set headers.
    const byQuery = await open(s.url, ann, `/events/stream?lastEventId=${got[97]?.id}`);
    expect(await until(() => byQuery.events().length >= 2)).toBe(true);
    await new Promise((ok) => setTimeout(ok, 200));
    expect(byQuery.events().map((e) => e.id)).toEqual(got.slice(98).map((e) => e.id));
    byQuery.close();

    // A malformed id, and a well-formed one of no event: a catalogued 400, never a 500.
    for (const id of ['evt_nope', `evt_${'0'.repeat(10)}${'Z'.repeat(16)}`, 'x'.repeat(5000)]) {
      const bogus = await call(s.url, 'GET', '/events/stream', { headers: { ...ann, 'last-event-id': id } });
      expect(bogus.status).toBe(400);
      expect(bogus.body.code).toBe('invalid_query');
    }
  });

  it('E2: an idle stream carries a heartbeat comment at the configured interval', async () => {
    const idle = await open(s.url, ann);
    expect(await until(() => (idle.text().match(/^: heartbeat$/gm) ?? []).length >= 2, 2000)).toBe(true);
    idle.close();
  });

  it('E3: each caller sees only events about records it may read; ?type filters; an unknown type is refused', async () => {
    const annStream = await open(s.url, ann);
    const bobStream = await open(s.url, bob);
    await create(bob, 'bob only');
    await create(ann, 'ann only');
    expect(await until(() => annStream.events().length === 1 && bobStream.events().length === 1)).toBe(true);
    await new Promise((ok) => setTimeout(ok, 300));
    expect(annStream.events().map((e) => (e.data.data.record as { title: string }).title)).toEqual(['ann only']);
    expect(bobStream.events().map((e) => (e.data.data.record as { title: string }).title)).toEqual(['bob only']);
    annStream.close();
    bobStream.close();

    const updates = await open(s.url, ann, '/events/stream?type=Ticket.updated');
    const everything = await open(s.url, ann);
    const made = await create(ann, 'to rename');
    expect(
      (await call(s.url, 'PATCH', `/tickets/${made.body.id}`, { json: { title: 'renamed' }, headers: ann })).status,
    ).toBe(200);
    expect(await until(() => everything.events().length === 2)).toBe(true);
    await new Promise((ok) => setTimeout(ok, 200));
    expect(everything.events().map((e) => e.event)).toEqual(['Ticket.created', 'Ticket.updated']);
    expect(updates.events().map((e) => e.event)).toEqual(['Ticket.updated']);
    expect(updates.events()[0]?.id).toBe(everything.events()[1]?.id);
    updates.close();
    everything.close();

    const filtered = await call(s.url, 'GET', '/events/stream?type=Ticket.nope', { headers: ann });
    expect(filtered.status).toBe(400);
    expect(filtered.body.code).toBe('invalid_filter');
    expect((await call(s.url, 'GET', '/events/stream')).status).toBe(401);
  });

  it('E4: a reader that never reads is disconnected after a bounded buffer; it can resume', async () => {
    // The server's side of the stream: what it holds unsent, sampled while the events are written.
    let response: ServerResponse | undefined;
    const streams: ServerResponse[] = [];
    const watch = (req: IncomingMessage, res: ServerResponse) => {
      if (req.url === '/events/stream' && req.headers['x-watch'] === 'e4') response = res;
      if (req.url?.startsWith('/events/stream')) streams.push(res);
    };
    s.app.server.on('request', watch);
    let mostUnsent = 0;
    let mostCloseListeners = 0;
    const sampler = setInterval(() => {
      mostUnsent = Math.max(mostUnsent, response?.writableLength ?? 0);
      for (const res of streams) mostCloseListeners = Math.max(mostCloseListeners, res.listenerCount('close'));
    }, 5);
    const socket = connect(Number(new URL(s.url).port), '127.0.0.1');
    await new Promise((ok) => socket.once('connect', ok));
    socket.write(`GET /events/stream HTTP/1.1\r\nhost: x\r\nx-watch: e4\r\nx-api-key: ${ann['x-api-key']}\r\n\r\n`);
    socket.pause();
    await new Promise((ok) => setTimeout(ok, 300));
    const blob = 'x'.repeat(150_000);
    // About 30 MB of events for a reader that reads nothing.
    for (let i = 0; i < 200; i++) expect((await create(ann, `big ${i}`, blob)).status).toBe(201);
    await new Promise((ok) => setTimeout(ok, 500));
    let received = 0;
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.length;
      text += chunk.toString('latin1');
    });
    const closed = new Promise((ok) => socket.once('close', ok));
    socket.resume();
    expect(await Promise.race([closed.then(() => true), new Promise((ok) => setTimeout(() => ok(false), 5000))])).toBe(
      true,
    );
    expect(response).toBeDefined();
    // The server held at most its 1 MiB buffer plus one page read from the outbox (256 KiB, or one event).
    expect(mostUnsent).toBeGreaterThan(0);
    expect(mostUnsent).toBeLessThan(1.5 * 1024 * 1024);
    // What reached the reader is the bounded buffer plus what the kernel held, far from all 30 MB.
    expect(received).toBeLessThan(12 * 1024 * 1024);
    // It resumes after the last event it got whole, and gets the rest, up to the last one written.
    const ids = [...text.matchAll(/^id: (evt_\w+)\nevent: Ticket.created\ndata: .*\n\n/gm)].map((m) => m[1]);
    expect(ids.length).toBeGreaterThan(0);
    expect(ids.length).toBeLessThan(200);
    const rest = await open(s.url, { ...ann, 'last-event-id': ids.at(-1) as string });
    expect(await until(() => rest.events().length === 200 - ids.length, 8000)).toBe(true);
    const lastRecord = rest.events().at(-1)?.data.data.record as { title: string } | undefined;
    expect(lastRecord?.title).toBe('big 199');
    rest.close();
    clearInterval(sampler);
    s.app.server.off('request', watch);
    // Every wait for a reader to drain cleaned up after itself (the reader catching up waited many times).
    expect(streams).toHaveLength(2);
    expect(mostCloseListeners).toBeLessThan(5);
  });

  it('E5: a caller may hold a bounded number of streams; 429 too_many_streams beyond, freed when one closes', async () => {
    const a = await open(s.url, ann);
    const b = await open(s.url, ann);
    const refused = await call(s.url, 'GET', '/events/stream', { headers: ann });
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe('too_many_streams');
    expect(refused.headers.get('retry-after')).toBe('5');
    const other = await open(s.url, bob);
    expect(other.status).toBe(200);
    a.close();
    await until(() => false, 200);
    const c = await open(s.url, ann);
    expect(c.status).toBe(200);
    for (const x of [b, c, other]) x.close();
    await until(() => false, 200);

    // Requests that go away before their stream starts hold no place.
    for (let i = 0; i < 4; i++) {
      const socket = connect(Number(new URL(s.url).port), '127.0.0.1');
      await new Promise((ok) => socket.once('connect', ok));
      socket.end(`GET /events/stream HTTP/1.1\r\nhost: x\r\nx-api-key: ${ann['x-api-key']}\r\n\r\n`);
      socket.destroy();
    }
    await until(() => false, 300);
    const afterAborts = [await open(s.url, ann), await open(s.url, ann)];
    expect(afterAborts.map((x) => x.status)).toEqual([200, 200]);
    for (const x of afterAborts) x.close();
  });

  it('E5: anonymous callers are counted by address; the process cap holds over all callers', async () => {
    const served = await servePlan(planOf(OPEN_SPEC));
    try {
      const first = await open(served.url, {}, '/events/stream', '127.0.0.1');
      expect(first.status).toBe(200);
      const same = await call(served.url, 'GET', '/events/stream');
      expect([same.status, same.body.code]).toEqual([429, 'too_many_streams']);
      expect(same.body.detail).toContain('per caller');
      const second = await open(served.url, {}, '/events/stream', '127.0.0.2');
      expect(second.status).toBe(200);
      const third = await open(served.url, {}, '/events/stream', '127.0.0.3');
      expect(third.status).toBe(429);
      expect(third.text()).toContain('too_many_streams');
      expect(third.headers['retry-after']).toBe('5');
      first.close();
      await until(() => false, 200);
      const again = await open(served.url, {}, '/events/stream', '127.0.0.3');
      expect(again.status).toBe(200);
      second.close();
      again.close();
    } finally {
      await served.close({ remove: true });
    }
  });

  it('E6: a stream whose key is revoked ends within the recheck interval', async () => {
    const issued = await issueApiKey(s.store, { subject: 'cat', roles: ['agent'] });
    const stream = await open(s.url, { 'x-api-key': issued.key });
    expect(stream.status).toBe(200);
    const started = Date.now();
    await s.store.apiKeys.revoke(issued.record.id, new Date());
    await stream.ended;
    expect(Date.now() - started).toBeLessThan(2000);
    expect(stream.text()).toContain('event: error');
    expect((await call(s.url, 'GET', '/events/stream', { headers: { 'x-api-key': issued.key } })).status).toBe(401);
  });
});
