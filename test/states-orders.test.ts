import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../src/parts/auth/keys.ts';
import { call, type Served, useHeaders } from './helpers/serve-spec.ts';
import { historyOf, planOfFile, servePlan, withoutRateLimits } from './helpers/serve-states.ts';

// The order desk of examples/orders: cart → placed → paid → shipped → delivered; cancel from cart or placed.
// Every call carries a staff API key (roles admin, billing, support); test/auth-*.test.ts covers the rest.

let s: Served;
let customer: string;
let product: string;
let staff: string;
beforeAll(async () => {
  s = await servePlan(withoutRateLimits(await planOfFile('examples/orders/service.yaml')));
  const issued = await issueApiKey(s.store, { subject: 'staff-1', roles: ['admin', 'billing', 'support'] });
  staff = issued.record.subject;
  useHeaders(s.url, { 'x-api-key': issued.key });
  const c = await call(s.url, 'POST', '/customers', { json: { email: 'ada@example.com', fullName: 'Ada' } });
  expect(c.status).toBe(201);
  customer = c.body.id;
  const p = await call(s.url, 'POST', '/products', { json: { sku: 'TEA-1', name: 'Tea', price: '4.50' } });
  expect(p.status).toBe(201);
  product = p.body.id;
});
afterAll(() => s.close({ remove: true }));

const newOrder = async () => {
  const r = await call(s.url, 'POST', '/orders', { json: { customer } });
  expect(r.status).toBe(201);
  expect(r.body.status).toBe('cart');
  return { ...(r.body as { id: string; status: string }), etag: r.headers.get('etag') ?? '' };
};
const getOrder = async (id: string) => (await call(s.url, 'GET', `/orders/${id}`)).body;
/** The record's ETag as a GET sees it now: unchanged ETag, unchanged revision. */
const etagNow = async (id: string) => (await call(s.url, 'GET', `/orders/${id}`)).headers.get('etag');
const historyCount = () => s.countRows('_ninefold_history');

describe('the order goes cart → placed → paid → shipped → delivered', () => {
  it('each transition answers 200 with the record and an ETag, and history lists them oldest first', async () => {
    const order = await newOrder();
    const lines = [{ product, qty: 2 }];
    const patched = await call(s.url, 'PATCH', `/orders/${order.id}`, { json: { lines, note: 'ring twice' } });
    expect(patched.status).toBe(200);
    expect(patched.body.lines).toEqual(lines);

    const placed = await call(s.url, 'POST', `/orders/${order.id}/place`, { json: {} });
    expect(placed.status).toBe(200);
    expect(placed.body).toMatchObject({ id: order.id, status: 'placed', note: 'ring twice' });
    expect(placed.headers.get('etag')).toBeTruthy();
    expect(placed.headers.get('etag')).not.toBe(patched.headers.get('etag'));
    expect(await etagNow(order.id)).toBe(placed.headers.get('etag'));

    const paid = await call(s.url, 'POST', `/orders/${order.id}/pay`, { json: { paymentRef: 'pay_123' } });
    expect(paid.status).toBe(200);
    expect(paid.body).toMatchObject({ status: 'paid', paymentRef: 'pay_123' });

    const shipping = { carrier: 'DHL', trackingNumber: 'JD0001' };
    const shipped = await call(s.url, 'POST', `/orders/${order.id}/ship`, { json: shipping });
    expect(shipped.status).toBe(200);
    expect(shipped.body).toMatchObject({ status: 'shipped', ...shipping });

    const delivered = await call(s.url, 'POST', `/orders/${order.id}/deliver`);
    expect(delivered.status).toBe(200);
    expect(delivered.body.status).toBe('delivered');
    expect(await getOrder(order.id)).toMatchObject({ status: 'delivered', paymentRef: 'pay_123', ...shipping });

    const history = await historyOf(s.url, `/orders/${order.id}`);
    expect(history.map((h) => [h.transition, h.from, h.to])).toEqual([
      ['place', 'cart', 'placed'],
      ['pay', 'placed', 'paid'],
      ['ship', 'paid', 'shipped'],
      ['deliver', 'shipped', 'delivered'],
    ]);
    expect(history.map((h) => h.input)).toEqual([{}, { paymentRef: 'pay_123' }, shipping, {}]);
    for (const h of history) {
      expect(h.actor).toBe(staff);
      expect(Number.isNaN(Date.parse(h.at))).toBe(false);
    }
    const at = history.map((h) => Date.parse(h.at));
    expect([...at].sort((a, b) => a - b)).toEqual(at);
  });

  it('cancel takes a cart or a placed order to cancelled, and a cancelled order goes nowhere', async () => {
    const fromCart = await newOrder();
    const c1 = await call(s.url, 'POST', `/orders/${fromCart.id}/cancel`, { json: {} });
    expect(c1.status).toBe(200);
    expect(c1.body.status).toBe('cancelled');

    const fromPlaced = await newOrder();
    await call(s.url, 'PATCH', `/orders/${fromPlaced.id}`, { json: { lines: [{ product, qty: 1 }] } });
    expect((await call(s.url, 'POST', `/orders/${fromPlaced.id}/place`)).status).toBe(200);
    const c2 = await call(s.url, 'POST', `/orders/${fromPlaced.id}/cancel`);
    expect(c2.status).toBe(200);
    expect(c2.body.status).toBe('cancelled');
    expect((await historyOf(s.url, `/orders/${fromPlaced.id}`)).map((h) => h.transition)).toEqual(['place', 'cancel']);

    const again = await call(s.url, 'POST', `/orders/${fromPlaced.id}/place`);
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: 'invalid_transition', currentState: 'cancelled', allowedTransitions: [] });
  });
});

describe('a refused transition answers the problem and writes nothing', () => {
  it('404 for an unknown record', async () => {
    const r = await call(s.url, 'POST', '/orders/ord_01JZZZZZZZZZZZZZZZZZZZZZZZ/place');
    expect(r.status).toBe(404);
    expect(r.body.code).toBe('not_found');
    const h = await call(s.url, 'GET', '/orders/ord_01JZZZZZZZZZZZZZZZZZZZZZZZ/history');
    expect(h.status).toBe(404);
  });

  it('409 invalid_transition with currentState and allowedTransitions when the state does not allow it', async () => {
    const order = await newOrder();
    const before = await historyCount();
    const r = await call(s.url, 'POST', `/orders/${order.id}/ship`, { json: { carrier: 'DHL', trackingNumber: 'X' } });
    expect(r.status).toBe(409);
    expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(r.body).toMatchObject({ code: 'invalid_transition', status: 409, currentState: 'cart' });
    expect([...r.body.allowedTransitions].sort()).toEqual(['cancel', 'place']);
    expect(await historyCount()).toBe(before);
    expect((await getOrder(order.id)).status).toBe('cart');
    expect(await etagNow(order.id)).toBe(order.etag);
  });

  it('422 transition_guard_failed with the guard when an empty cart is placed', async () => {
    const order = await newOrder();
    const before = await historyCount();
    const r = await call(s.url, 'POST', `/orders/${order.id}/place`, { json: {} });
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject({ code: 'transition_guard_failed', guard: 'size(record.lines) > 0' });
    expect(await historyCount()).toBe(before);
    expect((await getOrder(order.id)).status).toBe('cart');
    expect(await etagNow(order.id)).toBe(order.etag);
    expect(await historyOf(s.url, `/orders/${order.id}`)).toEqual([]);
  });

  it('422 validation_failed when pay lacks its paymentRef or sends a wrong type', async () => {
    const order = await newOrder();
    await call(s.url, 'PATCH', `/orders/${order.id}`, { json: { lines: [{ product, qty: 1 }] } });
    const placed = await call(s.url, 'POST', `/orders/${order.id}/place`);
    expect(placed.status).toBe(200);
    const before = await historyCount();
    for (const body of [{}, { paymentRef: '' }, { paymentRef: 42 }]) {
      const r = await call(s.url, 'POST', `/orders/${order.id}/pay`, { json: body });
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.body.code).toBe('validation_failed');
      expect(r.body.errors?.length).toBeGreaterThan(0);
    }
    const none = await call(s.url, 'POST', `/orders/${order.id}/pay`);
    expect(none.status).toBe(422);
    expect(none.body.code).toBe('validation_failed');
    expect(await historyCount()).toBe(before);
    const after = await getOrder(order.id);
    expect(after.status).toBe('placed');
    expect(after).not.toHaveProperty('paymentRef');
    expect(await etagNow(order.id)).toBe(placed.headers.get('etag'));
  });

  it('412 precondition_failed with a stale If-Match; the current ETag goes through', async () => {
    const order = await newOrder();
    const stale = (await call(s.url, 'GET', `/orders/${order.id}`)).headers.get('etag') ?? '';
    const patched = await call(s.url, 'PATCH', `/orders/${order.id}`, { json: { lines: [{ product, qty: 3 }] } });
    const fresh = patched.headers.get('etag') ?? '';
    expect(fresh).not.toBe(stale);
    const before = await historyCount();
    const r = await call(s.url, 'POST', `/orders/${order.id}/place`, { headers: { 'if-match': stale } });
    expect(r.status).toBe(412);
    expect(r.body.code).toBe('precondition_failed');
    expect(await historyCount()).toBe(before);
    expect((await getOrder(order.id)).status).toBe('cart');
    expect(await etagNow(order.id)).toBe(fresh);
    const ok = await call(s.url, 'POST', `/orders/${order.id}/place`, { headers: { 'if-match': fresh } });
    expect(ok.status).toBe(200);
    expect(ok.body.status).toBe('placed');
  });
});

describe('Idempotency-Key on a transition (S7)', () => {
  it('a retry replays the same status and body, and the transition is taken once', async () => {
    const order = await newOrder();
    await call(s.url, 'PATCH', `/orders/${order.id}`, { json: { lines: [{ product, qty: 1 }] } });
    await call(s.url, 'POST', `/orders/${order.id}/place`);
    const headers = { 'idempotency-key': `pay-${order.id}` };
    const first = await call(s.url, 'POST', `/orders/${order.id}/pay`, { json: { paymentRef: 'p1' }, headers });
    expect(first.status).toBe(200);
    const before = await historyCount();
    const retry = await call(s.url, 'POST', `/orders/${order.id}/pay`, { json: { paymentRef: 'p1' }, headers });
    expect(retry.status).toBe(200);
    expect(retry.text).toBe(first.text);
    expect(retry.headers.get('etag')).toBe(first.headers.get('etag'));
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await historyCount()).toBe(before);
    expect((await historyOf(s.url, `/orders/${order.id}`)).map((h) => h.transition)).toEqual(['place', 'pay']);
    expect(await etagNow(order.id)).toBe(first.headers.get('etag'));

    const other = await call(s.url, 'POST', `/orders/${order.id}/pay`, { json: { paymentRef: 'p2' }, headers });
    expect(other.status).toBe(422);
    expect(other.body.code).toBe('idempotency_key_reused');
    // Without the key the same request is a new one, and the order has moved on.
    const fresh = await call(s.url, 'POST', `/orders/${order.id}/pay`, { json: { paymentRef: 'p1' } });
    expect(fresh.status).toBe(409);
    expect(fresh.body.currentState).toBe('paid');
  });
});

describe('the state field and editable fields', () => {
  it('PATCH of a field not editable in the state answers 409 field_locked_in_state', async () => {
    const order = await newOrder();
    const inCart = await call(s.url, 'PATCH', `/orders/${order.id}`, {
      json: { callbackUrl: 'https://example.com/cb' },
    });
    expect(inCart.status).toBe(409);
    expect(inCart.body.code).toBe('field_locked_in_state');
    expect(inCart.body.errors).toEqual([expect.objectContaining({ pointer: '#/callbackUrl' })]);
    // An editable field alongside a locked one: the whole PATCH is refused, nothing is written.
    const mixed = await call(s.url, 'PATCH', `/orders/${order.id}`, {
      json: { note: 'hello', callbackUrl: 'https://example.com/cb' },
    });
    expect(mixed.status).toBe(409);
    expect(mixed.body.code).toBe('field_locked_in_state');
    const unchanged = await getOrder(order.id);
    expect(unchanged.status).toBe('cart');
    expect(unchanged).not.toHaveProperty('note');
    expect(unchanged).not.toHaveProperty('callbackUrl');
    expect(await etagNow(order.id)).toBe(order.etag);
    // The fields cart lists do change.
    const ok = await call(s.url, 'PATCH', `/orders/${order.id}`, { json: { note: 'hello' } });
    expect(ok.status).toBe(200);
    expect(ok.body.note).toBe('hello');
  });

  it('PATCH of the state field answers 422 use_transition_endpoint', async () => {
    const order = await newOrder();
    const r = await call(s.url, 'PATCH', `/orders/${order.id}`, { json: { status: 'paid' } });
    expect(r.status).toBe(422);
    expect(r.body.code).toBe('use_transition_endpoint');
    expect((await getOrder(order.id)).status).toBe('cart');
    expect(await etagNow(order.id)).toBe(order.etag);
  });

  it('create with the state field answers 422 read_only_field and stores nothing', async () => {
    const before = await s.countRows('order');
    const r = await call(s.url, 'POST', '/orders', { json: { customer, status: 'paid' } });
    expect(r.status).toBe(422);
    expect(r.body.code).toBe('read_only_field');
    expect(await s.countRows('order')).toBe(before);
  });
});

describe('lists filter by state', () => {
  it('?status=placed and ?status[in]=placed,paid', async () => {
    const states: Record<string, string> = {};
    for (const target of ['cart', 'placed', 'paid', 'cancelled']) {
      const o = await newOrder();
      if (target !== 'cart' && target !== 'cancelled') {
        await call(s.url, 'PATCH', `/orders/${o.id}`, { json: { lines: [{ product, qty: 1 }] } });
        expect((await call(s.url, 'POST', `/orders/${o.id}/place`)).status).toBe(200);
      }
      if (target === 'paid') await call(s.url, 'POST', `/orders/${o.id}/pay`, { json: { paymentRef: 'x' } });
      if (target === 'cancelled') await call(s.url, 'POST', `/orders/${o.id}/cancel`);
      states[o.id] = target;
    }
    const all = await call(s.url, 'GET', '/orders?limit=100');
    expect(all.status).toBe(200);
    const truth = new Map<string, string>(all.body.data.map((o: { id: string; status: string }) => [o.id, o.status]));
    for (const [id, state] of Object.entries(states)) expect(truth.get(id)).toBe(state);

    const placed = await call(s.url, 'GET', '/orders?status=placed&limit=100');
    expect(placed.status).toBe(200);
    const wantPlaced = [...truth].filter(([, st]) => st === 'placed').map(([id]) => id);
    expect(placed.body.data.map((o: { id: string }) => o.id).sort()).toEqual(wantPlaced.sort());
    expect(wantPlaced.length).toBeGreaterThan(0);

    const either = await call(s.url, 'GET', '/orders?status[in]=placed,paid&limit=100');
    expect(either.status).toBe(200);
    const wantEither = [...truth].filter(([, st]) => st === 'placed' || st === 'paid').map(([id]) => id);
    expect(either.body.data.map((o: { id: string }) => o.id).sort()).toEqual(wantEither.sort());
    expect(new Set(either.body.data.map((o: { status: string }) => o.status))).toEqual(new Set(['placed', 'paid']));
  });
});
