import { execFile } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { join, resolve } from 'node:path';
import { Parser } from '@asyncapi/parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../src/parts/auth/keys.ts';
import { call, planOf, type Served, servePlan } from './helpers/serve-spec.ts';
import { waitFor } from './helpers/wait-for.ts';
import { type Receiver, startReceiver } from './helpers/webhook-receiver.ts';

/**
 * Three versions, two renames between the oldest and the newest (title → subject in v2, outcome → resolution in
 * v3): everything a caller of v1 reads besides records speaks v1 too.
 */
const SPEC = `
ninefold: 1
service: { name: desk, title: Desk, purpose: Everything a versioned caller reads speaks its version. }
resources:
  Ticket:
    fields:
      subject: { type: string, required: true, maxLength: 80 }
      resolution: { type: string }
      hook: { type: string, format: uri }
    states:
      initial: open
      transitions:
        close: { from: open, to: closed, input: { resolution: { type: string, required: true } } }
auth:
  schemes: { key: { type: apiKey, in: header, name: X-Api-Key } }
  require: [key]
  roles: { agent: Works tickets., admin: Runs the desk. }
events:
  auto: true
  webhooks: { allowPrivateTargets: true }
  callbacks: { Ticket: { field: hook, events: [Ticket.closed] } }
  stream: { path: /events/stream }
endpoints:
  Ticket: { list: { sort: [subject, createdAt], pageSize: { default: 2, max: 10 } } }
versioning:
  scheme: header
  versions:
    - id: v1
    - id: v2
      changes: [{ resource: Ticket, rename: { from: title, to: subject } }]
    - id: v3
      changes: [{ resource: Ticket, rename: { from: outcome, to: resolution } }]
`;

const ROOT = resolve(import.meta.dirname, '..');
const V1 = { 'api-version': 'v1' };
const V3 = { 'api-version': 'v3' };

let s: Served;
let agent: Record<string, string>;
let receiver: Receiver;

beforeAll(async () => {
  s = await servePlan(planOf(SPEC), { webhookPollMs: 50 });
  agent = { 'x-api-key': (await issueApiKey(s.store, { subject: 'ann', roles: ['agent'] })).key };
  receiver = await startReceiver();
});
afterAll(async () => {
  await s?.close({ remove: true });
  await receiver?.close();
});

const create = async (json: Record<string, unknown>, headers = V1) => {
  const made = await call(s.url, 'POST', '/tickets', { json, headers: { ...agent, ...headers } });
  expect(made.status).toBe(201);
  return made.body.id as string;
};

describe('history and events in the caller version', () => {
  it('a record history shows a transition input under the names of the caller version', async () => {
    const id = await create({ title: 'Printer on fire' });
    // The input is written in the caller's version too: the newest name is unknown there.
    const newestName = await call(s.url, 'POST', `/tickets/${id}/close`, {
      json: { resolution: 'extinguished' },
      headers: { ...agent, ...V1 },
    });
    expect(newestName.status).toBe(422);
    expect(newestName.body).toMatchObject({ code: 'unknown_field', errors: [{ pointer: '#/resolution' }] });
    const closed = await call(s.url, 'POST', `/tickets/${id}/close`, {
      json: { outcome: 'extinguished' },
      headers: { ...agent, ...V1 },
    });
    expect(closed.status).toBe(200);
    expect(closed.body).toMatchObject({ title: 'Printer on fire', outcome: 'extinguished', status: 'closed' });
    const old = await call(s.url, 'GET', `/tickets/${id}/history`, { headers: { ...agent, ...V1 } });
    expect(old.status).toBe(200);
    expect(old.body.data).toEqual([
      expect.objectContaining({ transition: 'close', input: { outcome: 'extinguished' } }),
    ]);
    const newest = await call(s.url, 'GET', `/tickets/${id}/history`, { headers: { ...agent, ...V3 } });
    expect(newest.body.data[0].input).toEqual({ resolution: 'extinguished' });
  });

  it('the event log (a page and one event) shows records in the caller version', async () => {
    const id = await create({ title: 'Log me' });
    const page = async (headers: Record<string, string>) => {
      const r = await call(s.url, 'GET', '/events?type=Ticket.created&limit=100', {
        headers: { ...agent, ...headers },
      });
      expect(r.status).toBe(200);
      return r.body.data.find((e: { data: { record: { id: string } } }) => e.data.record.id === id);
    };
    const old = await page(V1);
    expect(old.data.record.title).toBe('Log me');
    expect(old.data.record).not.toHaveProperty('subject');
    expect((await page(V3)).data.record).toMatchObject({ subject: 'Log me' });
    const one = await call(s.url, 'GET', `/events/${old.id}`, { headers: { ...agent, ...V1 } });
    expect(one.body.data.record).toMatchObject({ title: 'Log me' });
    expect(one.body.data.record).not.toHaveProperty('subject');
    // The names of changed fields too.
    await call(s.url, 'PATCH', `/tickets/${id}`, { json: { title: 'Logged' }, headers: { ...agent, ...V1 } });
    const updated = await call(s.url, 'GET', '/events?type=Ticket.updated&limit=100', {
      headers: { ...agent, ...V1 },
    });
    const change = updated.body.data.find((e: { data: { record: { id: string } } }) => e.data.record.id === id);
    expect(change.data.changed).toEqual(['title']);
    expect(change.data.record.title).toBe('Logged');
  });

  it('the stream shows records in the version of the request that opened it', async () => {
    const stream = await openStream({ ...agent, ...V1 });
    try {
      expect(stream.status).toBe(200);
      const id = await create({ subject: 'Streamed' }, V3);
      await waitFor(() => stream.text().includes(id), 'the event on the stream');
      const line = stream
        .text()
        .split('\n')
        .find((l) => l.startsWith('data: ') && l.includes(id)) as string;
      const event = JSON.parse(line.slice('data: '.length));
      expect(event.data.record).toMatchObject({ id, title: 'Streamed' });
      expect(event.data.record).not.toHaveProperty('subject');
    } finally {
      stream.close();
    }
  });

  it('a callback is rendered in the version of the request that made the change', async () => {
    const old = await create({ title: 'Call me back', hook: `${receiver.url}/old` });
    const newer = await create({ subject: 'Call me too', hook: `${receiver.url}/new` }, V3);
    await call(s.url, 'POST', `/tickets/${old}/close`, { json: { outcome: 'done' }, headers: { ...agent, ...V1 } });
    await call(s.url, 'POST', `/tickets/${newer}/close`, {
      json: { resolution: 'done' },
      headers: { ...agent, ...V3 },
    });
    await waitFor(() => receiver.hits.length >= 2, 'both callbacks');
    const bodies = receiver.hits.map((h) => JSON.parse(h.body));
    const ofOld = bodies.find((b) => b.data.record.id === old);
    const ofNew = bodies.find((b) => b.data.record.id === newer);
    expect(ofOld.type).toBe('Ticket.closed');
    expect(ofOld.data.record).toMatchObject({ title: 'Call me back', outcome: 'done' });
    expect(ofOld.data.record).not.toHaveProperty('subject');
    expect(ofOld.data).not.toHaveProperty('apiVersion');
    expect(ofNew.data.record).toMatchObject({ subject: 'Call me too', resolution: 'done' });
    // Nor is the version a callback goes out in shown in the event log.
    const logged = await call(s.url, 'GET', '/events?type=Ticket.closed&limit=100', { headers: { ...agent, ...V3 } });
    for (const e of logged.body.data) expect(e.data).not.toHaveProperty('apiVersion');
  });
});

describe('ETags, idempotent replays and cursors in the caller version', () => {
  it('an old version has ETags of its own: If-None-Match answers 304 and a stale If-Match 412 in it', async () => {
    const id = await create({ title: 'Tagged' });
    const read = await call(s.url, 'GET', `/tickets/${id}`, { headers: { ...agent, ...V1 } });
    const tag = read.headers.get('etag') as string;
    expect(tag).toBe('"r1.v1"');
    const newestTag = (await call(s.url, 'GET', `/tickets/${id}`, { headers: { ...agent, ...V3 } })).headers.get(
      'etag',
    );
    expect(newestTag).toBe('"r1"');

    const same = await call(s.url, 'GET', `/tickets/${id}`, { headers: { ...agent, ...V1, 'if-none-match': tag } });
    expect(same.status).toBe(304);
    expect(same.text).toBe('');
    expect(same.headers.get('etag')).toBe(tag);
    // The newest version's tag names another representation: the v1 caller gets the whole record.
    const other = await call(s.url, 'GET', `/tickets/${id}`, {
      headers: { ...agent, ...V1, 'if-none-match': newestTag as string },
    });
    expect(other.status).toBe(200);
    expect(other.body.title).toBe('Tagged');

    const written = await call(s.url, 'PATCH', `/tickets/${id}`, {
      json: { title: 'Tagged again' },
      headers: { ...agent, ...V1, 'if-match': tag },
    });
    expect(written.status).toBe(200);
    expect(written.headers.get('etag')).toBe('"r2.v1"');
    const stale = await call(s.url, 'PATCH', `/tickets/${id}`, {
      json: { title: 'Lost update' },
      headers: { ...agent, ...V1, 'if-match': tag },
    });
    expect(stale.status).toBe(412);
    expect(stale.body.currentEtag).toBe('"r2.v1"');
    const changed = await call(s.url, 'GET', `/tickets/${id}`, { headers: { ...agent, ...V1, 'if-none-match': tag } });
    expect(changed.status).toBe(200);
    expect(changed.body.title).toBe('Tagged again');
  });

  it('an idempotent replay answers in the version of the retry', async () => {
    const key = { 'idempotency-key': 'replay-in-versions' };
    const first = await call(s.url, 'POST', '/tickets', {
      json: { title: 'Once' },
      headers: { ...agent, ...V1, ...key },
    });
    expect(first.status).toBe(201);
    const again = await call(s.url, 'POST', '/tickets', {
      json: { title: 'Once' },
      headers: { ...agent, ...V1, ...key },
    });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('etag')).toBe('"r1.v1"');
    // The same request in v3 (the field under its v3 name) replays the same answer, in v3.
    const newer = await call(s.url, 'POST', '/tickets', {
      json: { subject: 'Once' },
      headers: { ...agent, ...V3, ...key },
    });
    expect(newer.headers.get('idempotent-replayed')).toBe('true');
    expect(newer.body).toMatchObject({ id: first.body.id, subject: 'Once' });
    expect(newer.body).not.toHaveProperty('title');
    expect(newer.headers.get('etag')).toBe('"r1"');
  });

  it('cursors of an old version page through a list sorted by a renamed field', async () => {
    const titles = ['cursor d', 'cursor b', 'cursor e', 'cursor a', 'cursor c'];
    for (const title of titles) await create({ title });
    const seen: string[] = [];
    let path = '/tickets?sort=title&limit=2';
    for (let pages = 0; pages < 50 && path; pages++) {
      const page = await call(s.url, 'GET', path, { headers: { ...agent, ...V1 } });
      expect(page.status).toBe(200);
      for (const t of page.body.data) {
        expect(t).not.toHaveProperty('subject');
        seen.push(t.title);
      }
      const cursor = page.body.nextCursor as string | null;
      path = cursor ? `/tickets?sort=title&limit=2&cursor=${encodeURIComponent(cursor)}` : '';
    }
    const ours = seen.filter((t) => t.startsWith('cursor '));
    expect(ours).toEqual([...titles].sort());
    expect(seen).toEqual([...seen].sort());
  });
});

describe('AsyncAPI per version', () => {
  it('/asyncapi/<version>.json is valid and shows the records of that version', async () => {
    const cases = [
      ['v1', 'title', 'subject'],
      ['v3', 'subject', 'title'],
    ] as const;
    // Both read before either is parsed: parsing takes seconds, longer than the server keeps an idle connection.
    const docs = [];
    for (const [version] of cases) {
      const r = await call(s.url, 'GET', `/asyncapi/${version}.json`);
      expect(r.status).toBe(200);
      docs.push(r.body);
    }
    expect((await call(s.url, 'GET', '/asyncapi.json')).body.info.version).toBe('v3');
    expect((await call(s.url, 'GET', '/asyncapi/v9.json')).status).toBe(404);
    for (const [i, [version, present, absent]] of cases.entries()) {
      const doc = docs[i];
      expect(doc.info.version).toBe(version);
      const { document, diagnostics } = await new Parser().parse(doc as never);
      expect(diagnostics.filter((d) => d.severity <= 1).map((d) => `${d.path.join('/')}: ${d.message}`)).toEqual([]);
      expect(document).toBeDefined();
      const record = Object.values(doc.components.schemas as Record<string, { properties?: object }>).find(
        (schema) => schema.properties && 'hook' in schema.properties,
      ) as { properties: object };
      expect(Object.keys(record.properties)).toContain(present);
      expect(Object.keys(record.properties)).not.toContain(absent);
    }
  });

  it('ninefold asyncapi --api-version writes the document of that version', async () => {
    const cli = (args: string[]) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
        execFile(
          process.execPath,
          [join(ROOT, 'bin/ninefold.js'), 'asyncapi', ...args],
          { cwd: ROOT },
          (e, stdout, stderr) => done({ code: e ? Number(e.code) : 0, stdout, stderr }),
        );
      });
    const { code, stdout } = await cli(['examples/orders/service.yaml', '--api-version', '2026-01-15']);
    expect(code).toBe(0);
    const doc = JSON.parse(stdout);
    expect(doc.info.version).toBe('2026-01-15');
    const customer = JSON.stringify(
      Object.entries(doc.components.schemas).filter(([name]) => name.startsWith('Customer')),
    );
    expect(customer).toContain('"name"');
    expect(customer).not.toContain('"fullName"');
    const wrong = await cli(['examples/orders/service.yaml', '--api-version', '2020-01-01']);
    expect(wrong.code).toBe(2);
  });
});

interface OpenStream {
  readonly status: number;
  text(): string;
  close(): void;
}

const openStream = (headers: Record<string, string>): Promise<OpenStream> =>
  new Promise((done, fail) => {
    const req = httpRequest(`${s.url}/events/stream`, { headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('error', () => undefined);
      // The stream has started once its first comment arrives: events committed after it are sent.
      res.once('data', () => done({ status: res.statusCode ?? 0, text: () => text, close: () => req.destroy() }));
    });
    req.on('error', fail);
    req.end();
  });
