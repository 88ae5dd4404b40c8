import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../src/parts/auth/keys.ts';
import { STREAM_BUFFER_BYTES } from '../src/parts/events/sse-connection.ts';
import { call, planOf, type Served, servePlan, TICKET_KEY_AUTH } from './helpers/serve-spec.ts';
import { awaiting } from './helpers/wait-for.ts';

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

type SseEvent = { id: string; event: string; data: { id: string; type: string; data: Record<string, unknown> } };

interface Sse {
  readonly status: number;
  readonly headers: IncomingMessage['headers'];
  /** Everything received so far. */
  text(): string;
  /** The events received so far, parsed. */
  events(): SseEvent[];
  /** Resolves once `check` holds, looked at on each chunk received; rejects if the stream ends first. */
  until(check: () => boolean): Promise<void>;
  /** Resolves when the server ends the stream. */
  readonly ended: Promise<void>;
  /** The server's side of this stream (on a server given to `watchStreams`). */
  server(): ServerSide;
  close(): void;
}

/** The server's side of a stream, watched from its request on. */
interface ServerSide {
  readonly res: ServerResponse;
  /** Resolves when it has closed: the server has let go of the stream, and of its place. */
  readonly closed: Promise<void>;
  /** The most text it held unsent, right after a write. */
  readonly mostUnsent: number;
  /** How many `drain` listeners were added to it: each wait for the reader to drain adds one. */
  readonly drainWaits: number;
}

const TAG = 'x-test-stream';
const serverSides = new Map<string, ServerSide>();
let tags = 0;

/** Watches the server's side of each stream request of this server, by the tag `open` gives it. */
const watchStreams = (served: Served) =>
  served.app.server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    const tag = req.headers[TAG];
    if (typeof tag !== 'string') return;
    const side = { res, closed: new Promise<void>((ok) => res.once('close', ok)), mostUnsent: 0, drainWaits: 0 };
    const write = res.write.bind(res) as (...args: unknown[]) => boolean;
    res.write = ((...args: unknown[]) => {
      const ok = write(...args);
      side.mostUnsent = Math.max(side.mostUnsent, res.writableLength);
      return ok;
    }) as typeof res.write;
    res.on('newListener', (event) => {
      if (event === 'drain') side.drainWaits++;
    });
    serverSides.set(tag, side);
  });

/** Parses the complete events in `text` from `from` on; returns them and where the next one starts. */
const parseEvents = (text: string, from: number): { events: SseEvent[]; next: number } => {
  const events: SseEvent[] = [];
  let next = from;
  for (let end = text.indexOf('\n\n', next); end >= 0; end = text.indexOf('\n\n', next)) {
    const block = text.slice(next, end);
    next = end + 2;
    if (!block.startsWith('id: ')) continue;
    const field = (name: string) =>
      block
        .split('\n')
        .find((l) => l.startsWith(`${name}: `))
        ?.slice(name.length + 2) ?? '';
    events.push({ id: field('id'), event: field('event'), data: JSON.parse(field('data')) });
  }
  return { events, next };
};

const open = (url: string, headers: Record<string, string>, path = '/events/stream', from?: string): Promise<Sse> =>
  new Promise((resolve, reject) => {
    const tag = `sse-${++tags}`;
    const options = { headers: { ...headers, [TAG]: tag }, ...(from ? { localAddress: from } : {}) };
    const req = httpRequest(`${url}${path}`, options, (res) => {
      let text = '';
      let parsed = 0;
      const events: SseEvent[] = [];
      const waiters = new Set<() => void>();
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
        for (const wake of [...waiters]) wake();
      });
      const ended = new Promise<void>((ok) => res.on('close', () => ok()));
      const eventsSoFar = () => {
        const more = parseEvents(text, parsed);
        events.push(...more.events);
        parsed = more.next;
        return events;
      };
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        text: () => text,
        events: () => [...eventsSoFar()],
        until: (check) =>
          awaiting(
            new Promise<void>((ok, fail) => {
              const wake = () => {
                if (!check()) return;
                waiters.delete(wake);
                ok();
              };
              waiters.add(wake);
              wake();
              void ended.then(() => {
                if (waiters.delete(wake)) fail(new Error(`the stream ended first, after:\n${text.slice(-2000)}`));
              });
            }),
            () => `more of the stream ${path}; it has ${eventsSoFar().length} events`,
          ),
        ended,
        server: () => {
          const side = serverSides.get(tag);
          if (!side) throw new Error(`the server of ${url} is not watched`);
          return side;
        },
        close: () => req.destroy(),
      });
    });
    req.on('error', reject);
    req.end();
  });

const heartbeats = (text: string) => (text.match(/^: heartbeat$/gm) ?? []).length;
const titles = (events: SseEvent[]) => events.map((e) => (e.data.data.record as { title: string }).title);
const recordIds = (events: SseEvent[]) => events.map((e) => (e.data.data.record as { id: string }).id);

/** A ticket's blob at its maxLength: few, large events fill a reader's buffers. */
const BLOB = 'x'.repeat(200_000);
/** Text the stream renders per read of the outbox, at most (src/parts/events/stream.ts), plus one more event. */
const PAGE_BYTES = 256 * 1024;

let s: Served;
let ann: Record<string, string>;
let bob: Record<string, string>;
beforeAll(async () => {
  s = await servePlan(planOf(SPEC));
  watchStreams(s);
  ann = { 'x-api-key': (await issueApiKey(s.store, { subject: 'ann', roles: ['agent'] })).key };
  bob = { 'x-api-key': (await issueApiKey(s.store, { subject: 'bob', roles: ['agent'] })).key };
});
afterAll(() => s.close({ remove: true }));

const create = (headers: Record<string, string>, title: string, blob?: string) =>
  call(s.url, 'POST', '/tickets', { json: { title, ...(blob ? { blob } : {}) }, headers });

/**
 * A reader on a raw socket: it takes the first chunk (the stream has started, so where it reads the outbox from
 * is fixed), then reads nothing until `readAll`, which reads to the end.
 */
const stalledReader = async (tag: string, lastEventId?: string) => {
  const socket = connect(Number(new URL(s.url).port), '127.0.0.1');
  let text = '';
  socket.on('data', (chunk: Buffer) => {
    text += chunk.toString('latin1');
  });
  socket.on('error', () => undefined); // a reset after the cut ends the reader as a close does
  const closed = new Promise((ok) => socket.once('close', ok));
  const started = new Promise((ok) => socket.once('data', ok));
  await new Promise((ok) => socket.once('connect', ok));
  const resume = lastEventId ? `last-event-id: ${lastEventId}\r\n` : '';
  socket.write(
    `GET /events/stream HTTP/1.1\r\nhost: x\r\n${TAG}: ${tag}\r\nx-api-key: ${ann['x-api-key']}\r\n${resume}\r\n`,
  );
  await started;
  socket.pause();
  return {
    server: serverSides.get(tag) as ServerSide,
    readAll: async () => {
      socket.resume();
      await closed;
      return text;
    },
  };
};

/** Creates large events `big <n>`, from `n` on, until the stream holds more than its buffer unsent; returns the next n. */
const fillUntilOver = async (side: ServerSide, n: number) => {
  let next = n;
  while (side.res.writableLength <= STREAM_BUFFER_BYTES && !side.res.destroyed) {
    if (next - n >= 500) throw new Error(`the stream never held more than its buffer, after ${next - n} events`);
    expect((await create(ann, `big ${next}`, BLOB)).status).toBe(201);
    next++;
  }
  return next;
};

/** The events a raw reader got whole, with the title of their record. */
const wholeEvents = (text: string) =>
  [...text.matchAll(/^id: (evt_\w+)\nevent: Ticket.created\ndata: (.*)\n\n/gm)].map((m) => ({
    id: m[1] as string,
    title: JSON.parse(m[2] as string).data.record.title as string,
  }));

// No test waits on the clock: a stream is read until what the test needs has arrived, and "nothing else came"
// is shown by a marker written last arriving right behind what was expected (a stream keeps commit order).
describe('the event stream', () => {
  it('E1: a reader that reconnects with Last-Event-ID gets every event it missed, in order, and nothing older', async () => {
    const first = await open(s.url, ann);
    expect(first.status).toBe(200);
    expect(first.headers['content-type']).toContain('text/event-stream');
    await create(ann, 'before');
    await first.until(() => first.events().length === 1);
    const last = first.events()[0]?.id as string;
    first.close();
    await first.ended;
    const made: string[] = [];
    for (let i = 0; i < 100; i++) made.push((await create(ann, `missed ${i}`)).body.id);
    const again = await open(s.url, { ...ann, 'last-event-id': last });
    await again.until(() => again.events().length >= 100);
    made.push((await create(ann, 'marker')).body.id);
    await again.until(() => again.events().length >= 101);
    const got = again.events();
    expect(recordIds(got)).toEqual(made);
    expect(got.every((e) => e.event === 'Ticket.created' && e.id > last)).toBe(true);
    again.close();

    // The same resume through the query, for clients that cannot set headers.
    const byQuery = await open(s.url, ann, `/events/stream?lastEventId=${got[97]?.id}`);
    await byQuery.until(() => byQuery.events().length >= 3);
    const marker = (await create(ann, 'second marker')).body.id;
    await byQuery.until(() => byQuery.events().length >= 4);
    expect(byQuery.events().map((e) => e.id)).toEqual([...got.slice(98).map((e) => e.id), expect.any(String)]);
    expect(recordIds(byQuery.events()).at(-1)).toBe(marker);
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
    // Three at 200 ms come at once; at the 15 s default they could not come within the test's 30 s timeout.
    await idle.until(() => heartbeats(idle.text()) >= 3);
    expect(idle.events()).toEqual([]);
    idle.close();
  });

  it('E3: each caller sees only events about records it may read; ?type filters; an unknown type is refused', async () => {
    const annStream = await open(s.url, ann);
    const bobStream = await open(s.url, bob);
    await create(bob, 'bob only');
    await create(ann, 'ann only');
    await create(bob, 'bob marker');
    await create(ann, 'ann marker');
    await annStream.until(() => annStream.events().length >= 2);
    await bobStream.until(() => bobStream.events().length >= 2);
    expect(titles(annStream.events())).toEqual(['ann only', 'ann marker']);
    expect(titles(bobStream.events())).toEqual(['bob only', 'bob marker']);
    annStream.close();
    bobStream.close();

    const updates = await open(s.url, ann, '/events/stream?type=Ticket.updated');
    const everything = await open(s.url, ann);
    const made = await create(ann, 'to rename');
    for (const title of ['renamed', 'renamed again']) {
      const patched = await call(s.url, 'PATCH', `/tickets/${made.body.id}`, { json: { title }, headers: ann });
      expect(patched.status).toBe(200);
    }
    await everything.until(() => everything.events().length >= 3);
    await updates.until(() => updates.events().length >= 2);
    expect(everything.events().map((e) => e.event)).toEqual(['Ticket.created', 'Ticket.updated', 'Ticket.updated']);
    expect(updates.events().map((e) => e.id)).toEqual(
      everything
        .events()
        .slice(1)
        .map((e) => e.id),
    );
    updates.close();
    everything.close();

    const filtered = await call(s.url, 'GET', '/events/stream?type=Ticket.nope', { headers: ann });
    expect(filtered.status).toBe(400);
    expect(filtered.body.code).toBe('invalid_filter');
    expect((await call(s.url, 'GET', '/events/stream')).status).toBe(401);
  });

  it('E4: a reader that never reads is disconnected after a bounded buffer; it can resume', async () => {
    // Reader A is there as the events are written: they go in until its stream holds more than the buffer
    // unsent (its socket's kernel buffers are full by then), which sizes the backlog for reader B.
    const watcher = await open(s.url, ann);
    await create(ann, 'start');
    await watcher.until(() => watcher.events().length === 1);
    watcher.close();
    const a = await stalledReader('stalled-a');
    let created = await fillUntilOver(a.server, 0);
    // Reader B comes later, from before the first of them, with 2 MB more behind: a stream that read on
    // past its buffer would now hold far more than the bound below.
    for (const end = created + 10; created < end; created++) {
      expect((await create(ann, `big ${created}`, BLOB)).status).toBe(201);
    }
    const b = await stalledReader('stalled-b', watcher.events()[0]?.id);
    created = await fillUntilOver(b.server, created);

    for (const reader of [a, b]) {
      // The server cuts the reader off, having held at most its buffer and one page read from the outbox.
      await awaiting(reader.server.closed, 'the server to cut off a reader that does not read');
      expect(reader.server.drainWaits).toBeGreaterThan(0);
      expect(reader.server.mostUnsent).toBeGreaterThan(STREAM_BUFFER_BYTES);
      expect(reader.server.mostUnsent).toBeLessThan(STREAM_BUFFER_BYTES + PAGE_BYTES + BLOB.length + 2048);
    }
    // The reader got what the buffers held before the cut: some events whole, not all of them.
    const whole = wholeEvents(await b.readAll());
    const gotByA = wholeEvents(await a.readAll());
    for (const got of [whole, gotByA]) {
      expect(got.length).toBeGreaterThan(0);
      expect(got.length).toBeLessThan(created);
    }
    // It resumes after the last event it got whole, and gets exactly the rest, in order.
    const rest = await open(s.url, { ...ann, 'last-event-id': whole.at(-1)?.id as string });
    await rest.until(() => rest.events().length >= created - whole.length);
    expect([...whole.map((e) => e.title), ...titles(rest.events())]).toEqual(
      Array.from({ length: created }, (_, i) => `big ${i}`),
    );
    rest.close();
    await rest.server().closed;

    // A wait for a reader to drain leaves no listener behind: once ended, a stream that waited holds the same
    // listeners as one that never had anything to send.
    const idle = await open(s.url, ann);
    idle.close();
    await idle.server().closed;
    for (const ended of [a.server, b.server, rest.server()]) {
      for (const event of ['close', 'drain']) {
        expect(ended.res.listenerCount(event), event).toBe(idle.server().res.listenerCount(event));
      }
    }
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
    await a.server().closed;
    const c = await open(s.url, ann);
    expect(c.status).toBe(200);
    for (const x of [b, c, other]) x.close();
    await Promise.all([b, c, other].map((x) => x.server().closed));

    // Requests that go away before their stream starts hold no place.
    for (let i = 0; i < 4; i++) {
      const gone = new Promise((ok) => s.app.server.once('connection', (conn: Socket) => conn.once('close', ok)));
      const socket = connect(Number(new URL(s.url).port), '127.0.0.1');
      await new Promise((ok) => socket.once('connect', ok));
      socket.end(`GET /events/stream HTTP/1.1\r\nhost: x\r\nx-api-key: ${ann['x-api-key']}\r\n\r\n`);
      socket.destroy();
      await gone;
    }
    const afterAborts = [await open(s.url, ann), await open(s.url, ann)];
    expect(afterAborts.map((x) => x.status)).toEqual([200, 200]);
    for (const x of afterAborts) x.close();
    await Promise.all(afterAborts.map((x) => x.server().closed));
  });

  it('E5: anonymous callers are counted by address; the process cap holds over all callers', async () => {
    const served = await servePlan(planOf(OPEN_SPEC));
    watchStreams(served);
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
      await first.server().closed;
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
    const before = stream.text().length;
    await s.store.apiKeys.revoke(issued.record.id, new Date());
    await awaiting(stream.ended, 'the stream of a revoked key to end');
    // Timed by the stream's own heartbeat (200 ms), not the wall clock, which a loaded machine stretches: the
    // recheck (300 ms) ends it within two heartbeats, a third allowed for the check's read of the key.
    expect(heartbeats(stream.text().slice(before))).toBeLessThanOrEqual(3);
    expect(stream.text()).toContain('event: error');
    expect((await call(s.url, 'GET', '/events/stream', { headers: { 'x-api-key': issued.key } })).status).toBe(401);
  });
});
