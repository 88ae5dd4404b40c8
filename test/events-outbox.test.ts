import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../src/parts/auth/keys.ts';
import { call, type Served } from './helpers/serve-spec.ts';
import { planOfFile, servePlan, withoutRateLimits } from './helpers/serve-states.ts';
import { awaiting } from './helpers/wait-for.ts';

// The outbox of the order desk: an event exists exactly when its change committed; the log and the stream show
// each caller only events about records it may read.
const SECRET = 'events-test-secret-0123456789abcdefghij';
let s: Served;
let staff: Record<string, string>;
let product: string;
const customers: Array<{ id: string; h: Record<string, string> }> = [];

const token = (sub: string) =>
  new SignJWT({ roles: ['customer'] })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(sub)
    .setIssuer('https://auth.example.com/')
    .setAudience('orders')
    .setExpirationTime('10m')
    .sign(new TextEncoder().encode(SECRET));

beforeAll(async () => {
  process.env.JWT_SECRET = SECRET;
  s = await servePlan(withoutRateLimits(await planOfFile('examples/orders/service.yaml')));
  staff = { 'x-api-key': (await issueApiKey(s.store, { subject: 'staff', roles: ['admin', 'billing'] })).key };
  for (const email of ['ann@example.com', 'bob@example.com']) {
    const r = await call(s.url, 'POST', '/customers', {
      json: { email, fullName: email, notes: 'staff only' },
      headers: staff,
    });
    customers.push({ id: r.body.id, h: { authorization: `Bearer ${await token(r.body.id)}` } });
  }
  product = (
    await call(s.url, 'POST', '/products', { json: { sku: 'TEA-1', name: 'Tea', price: '4.50' }, headers: staff })
  ).body.id;
});
afterAll(() => s.close({ remove: true }));

const allEvents = async (h: Record<string, string>, query = '') => {
  const out: Array<{ id: string; type: string; data: Record<string, unknown> }> = [];
  let cursor: string | null = null;
  do {
    const r = await call(s.url, 'GET', `/events?limit=100${query}${cursor ? `&cursor=${cursor}` : ''}`, { headers: h });
    expect(r.status).toBe(200);
    out.push(...r.body.data);
    cursor = r.body.nextCursor;
  } while (cursor);
  return out;
};

describe('the transactional outbox', () => {
  it('writes one event per committed change, with the changed fields, and none for a refused write', async () => {
    const before = (await allEvents(staff)).length;
    const made = await call(s.url, 'POST', '/orders', {
      json: { customer: customers[0]?.id, lines: [{ product, qty: 1 }] },
      headers: staff,
    });
    expect(made.status).toBe(201);
    const id = made.body.id;
    expect((await call(s.url, 'PATCH', `/orders/${id}`, { json: { note: 'gift' }, headers: staff })).status).toBe(200);
    // Refused writes: a validation error, a stale If-Match, a transition not allowed from the state.
    expect((await call(s.url, 'PATCH', `/orders/${id}`, { json: { note: 7 }, headers: staff })).status).toBe(422);
    const stale = await call(s.url, 'PATCH', `/orders/${id}`, {
      json: { note: 'x' },
      headers: { ...staff, 'if-match': '"r1"' },
    });
    expect(stale.status).toBe(412);
    expect((await call(s.url, 'POST', `/orders/${id}/pay`, { json: { paymentRef: 'p' }, headers: staff })).status).toBe(
      409,
    );
    expect((await call(s.url, 'POST', `/orders/${id}/place`, { headers: staff })).status).toBe(200);
    const events = (await allEvents(staff)).slice(before);
    expect(events.map((e) => e.type)).toEqual(['Order.created', 'Order.updated', 'Order.placed']);
    expect(events[1]?.data.changed).toEqual(['note']);
    expect(events[2]?.data).toMatchObject({ transition: 'place', from: 'cart', to: 'placed', actor: 'staff' });
    const placedRecord = events[2]?.data.record as { status: string } | undefined;
    expect(placedRecord?.status).toBe('placed');
    const one = await call(s.url, 'GET', `/events/${events[0]?.id}`, { headers: staff });
    expect(one.body).toEqual(events[0]);
  });

  it('a 50-way race for one transition leaves exactly one event', async () => {
    const id = (
      await call(s.url, 'POST', '/orders', {
        json: { customer: customers[0]?.id, lines: [{ product, qty: 1 }] },
        headers: staff,
      })
    ).body.id;
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => call(s.url, 'POST', `/orders/${id}/place`, { headers: staff })),
    );
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    const placed = (await allEvents(staff, '&type=Order.placed')).filter(
      (e) => (e.data.record as { id: string }).id === id,
    );
    expect(placed).toHaveLength(1);
  });

  it('shows a customer only the events of their own records', async () => {
    const [ann, bob] = customers;
    if (!ann || !bob) throw new Error('no customers');
    const mine = await call(s.url, 'POST', '/orders', { json: { lines: [{ product, qty: 2 }] }, headers: ann.h });
    const theirs = await call(s.url, 'POST', '/orders', { json: { lines: [{ product, qty: 3 }] }, headers: bob.h });
    const seen = await allEvents(ann.h);
    const ids = seen.map((e) => (e.data.record as { id?: string } | undefined)?.id);
    expect(ids).toContain(mine.body.id);
    expect(ids).not.toContain(theirs.body.id);
    const bobEvent = (await allEvents(bob.h)).find((e) => (e.data.record as { id?: string }).id === theirs.body.id);
    const peek = await call(s.url, 'GET', `/events/${bobEvent?.id}`, { headers: ann.h });
    expect(peek.status).toBe(404);
    expect(peek.body.code).toBe('not_found');
    // A field only staff may read is left out of the customer's copy of their own Customer events.
    const self = seen.filter((e) => e.type.startsWith('Customer.'));
    expect(self.length).toBeGreaterThan(0);
    for (const e of self) expect(e.data.record).not.toHaveProperty('notes');
    expect((await call(s.url, 'GET', '/events')).status).toBe(401);
    expect((await call(s.url, 'GET', '/events?type=Order.nope', { headers: staff })).body.code).toBe('invalid_filter');
  });
});

/**
 * Opens a stream and resolves once its first chunk came (so where it reads the outbox from is fixed); `finish`
 * reads on until `until` holds on the text so far, with no deadline but the test's, and closes it.
 */
const readStream = async (headers: Record<string, string>, until: (text: string) => boolean) => {
  const ctl = new AbortController();
  const res = await fetch(`${s.url}/events/stream`, { headers, signal: ctl.signal });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('text/event-stream');
  const reader = res.body?.getReader();
  if (!reader) throw new Error('no body');
  const decoder = new TextDecoder();
  let text = '';
  const read = async () => {
    const { value, done } = await reader.read();
    if (!done) text += decoder.decode(value, { stream: true });
    return done;
  };
  await read();
  return {
    finish: async () => {
      await awaiting(
        (async () => {
          while (!until(text) && !(await read()));
        })(),
        () => `more of the stream; it has:\n${text}`,
      );
      ctl.abort();
      return text;
    },
  };
};

describe('the event stream', () => {
  it('delivers new events live, only the caller’s, and resumes after Last-Event-ID with no gap', async () => {
    const [ann, bob] = customers;
    if (!ann || !bob) throw new Error('no customers');
    const live = await readStream(ann.h, (t) => (t.match(/^event: Order\.created$/gm) ?? []).length >= 2);
    const first = await call(s.url, 'POST', '/orders', { json: {}, headers: ann.h });
    await call(s.url, 'POST', '/orders', { json: {}, headers: bob.h });
    const second = await call(s.url, 'POST', '/orders', { json: {}, headers: ann.h });
    const text = await live.finish();
    expect(text).toContain(first.body.id);
    expect(text).toContain(second.body.id);
    expect(text).not.toContain(bob.id);
    const ids = [...text.matchAll(/^id: (evt_\w+)$/gm)].map((m) => m[1] as string);
    expect(ids).toHaveLength(2);
    // Resume from the first: the second comes again, nothing before it, nothing of Bob's.
    const resumed = await readStream({ ...ann.h, 'last-event-id': ids[0] as string }, (t) =>
      t.includes(ids[1] as string),
    );
    const again = await resumed.finish();
    expect([...again.matchAll(/^id: (evt_\w+)$/gm)].map((m) => m[1])).toEqual([ids[1]]);
  });

  it('refuses a Last-Event-ID it never issued, and a caller without credentials', async () => {
    const r = await call(s.url, 'GET', '/events/stream', {
      headers: { ...staff, 'last-event-id': 'evt_01JD7X3K9Q2M4N6P8R0S2T4V6W' },
    });
    expect(r.status).toBe(400);
    expect((await call(s.url, 'GET', '/events/stream')).status).toBe(401);
  });
});
