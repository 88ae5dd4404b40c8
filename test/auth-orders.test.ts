import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../src/parts/auth/keys.ts';
import { call, type Served } from './helpers/serve-spec.ts';
import { planOfFile, servePlan, withoutRateLimits } from './helpers/serve-states.ts';

// The order desk example as its users meet it: staff with API keys in X-Api-Key, customers with JWTs.
const SECRET = 'order-desk-test-secret-0123456789abcdef';
let s: Served;
let staff: Record<string, string>;
let billing: Record<string, string>;
let support: Record<string, string>;
let ann: { id: string; h: Record<string, string> };
let bob: { id: string; h: Record<string, string> };
let product: string;

const token = (subject: string, roles = ['customer']) =>
  new SignJWT({ roles })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(subject)
    .setIssuer('https://auth.example.com/')
    .setAudience('orders')
    .setExpirationTime('10m')
    .sign(new TextEncoder().encode(SECRET));

beforeAll(async () => {
  process.env.JWT_SECRET = SECRET;
  s = await servePlan(withoutRateLimits(await planOfFile('examples/orders/service.yaml')));
  const key = async (roles: string[]) => ({
    'x-api-key': (await issueApiKey(s.store, { subject: `staff-${roles.join('-')}`, roles })).key,
  });
  staff = await key(['admin']);
  billing = await key(['billing']);
  support = await key(['support']);
  const customer = async (email: string) => {
    const r = await call(s.url, 'POST', '/customers', { json: { email, fullName: email }, headers: staff });
    expect(r.status).toBe(201);
    return { id: r.body.id as string, h: { authorization: `Bearer ${await token(r.body.id)}` } };
  };
  ann = await customer('ann@example.com');
  bob = await customer('bob@example.com');
  const p = await call(s.url, 'POST', '/products', {
    json: { sku: 'MUG-1', name: 'Mug', price: '9.90' },
    headers: staff,
  });
  product = p.body.id;
});
afterAll(() => s.close({ remove: true }));

const order = async (who: Record<string, string>, body: Record<string, unknown> = {}) =>
  call(s.url, 'POST', '/orders', { json: { lines: [{ product, qty: 1 }], ...body }, headers: who });

describe('the order desk with staff keys and customer tokens', () => {
  it('answers 401 with a challenge per scheme to a caller without credentials', async () => {
    const r = await call(s.url, 'GET', '/orders');
    expect(r.status).toBe(401);
    expect(r.body.code).toBe('unauthenticated');
    expect(r.headers.get('www-authenticate')).toContain('Bearer realm="orders"');
    expect(r.headers.get('www-authenticate')).toContain('name="X-Api-Key"');
  });

  it('a customer creates orders as themself, and cannot create one for someone else', async () => {
    const mine = await order(ann.h);
    expect(mine.status).toBe(201);
    expect(mine.body.customer).toBe(ann.id);
    const forBob = await order(ann.h, { customer: bob.id });
    expect(forBob.status).toBe(422);
    expect(forBob.body.code).toBe('read_only_field');
    const staffFor = await order(staff, { customer: bob.id });
    expect(staffFor.status).toBe(201);
  });

  it('a customer sees only their own orders: lists, counts and single reads', async () => {
    const a = (await order(ann.h)).body.id;
    const b = (await order(bob.h)).body.id;
    const annList = await call(s.url, 'GET', '/orders?count=true&limit=100', { headers: ann.h });
    expect(annList.status).toBe(200);
    expect(annList.body.data.every((o: { customer: string }) => o.customer === ann.id)).toBe(true);
    expect(annList.body.total).toBe(annList.body.data.length);
    expect(annList.body.data.map((o: { id: string }) => o.id)).toContain(a);
    const peek = await call(s.url, 'GET', `/orders?customer=${bob.id}`, { headers: ann.h });
    expect(peek.body.data).toEqual([]);
    const foreign = await call(s.url, 'GET', `/orders/${b}`, { headers: ann.h });
    const missing = await call(s.url, 'GET', '/orders/ord_01JD7X3K9Q2M4N6P8R0S2T4V6W', { headers: ann.h });
    expect(foreign.status).toBe(404);
    expect(foreign.text.replaceAll(b, 'X')).toBe(missing.text.replaceAll('ord_01JD7X3K9Q2M4N6P8R0S2T4V6W', 'X'));
    const all = await call(s.url, 'GET', '/orders?count=true&limit=100', { headers: support });
    expect(all.body.data.map((o: { id: string }) => o.id)).toEqual(expect.arrayContaining([a, b]));
  });

  it('a customer changes only their own orders; another customer gets 404 and nothing changes', async () => {
    const b = (await order(bob.h)).body.id;
    for (const [method, path, json] of [
      ['PATCH', `/orders/${b}`, { note: 'mine now' }],
      ['POST', `/orders/${b}/place`, undefined],
      ['POST', `/orders/${b}/cancel`, undefined],
      ['DELETE', `/orders/${b}`, undefined],
    ] as const) {
      const r = await call(s.url, method, path, { headers: ann.h, ...(json ? { json } : {}) });
      expect(r.status, `${method} ${path}`).toBe(404);
    }
    const after = await call(s.url, 'GET', `/orders/${b}`, { headers: bob.h });
    expect(after.body.status).toBe('cart');
    expect(after.headers.get('etag')).toBe('"r1"');
    expect(after.body.note).toBeUndefined();
    const own = await call(s.url, 'PATCH', `/orders/${b}`, { json: { note: 'gift' }, headers: bob.h });
    expect(own.status).toBe(200);
    const steal = await call(s.url, 'PATCH', `/orders/${b}`, { json: { customer: ann.id }, headers: bob.h });
    expect(steal.status).toBe(422);
    expect(steal.body.code).toBe('read_only_field');
  });

  it('only staff with the billing role may pay; the history names who did what', async () => {
    const id = (await order(ann.h)).body.id;
    expect((await call(s.url, 'POST', `/orders/${id}/place`, { headers: ann.h })).status).toBe(200);
    for (const who of [ann.h, staff, support]) {
      const r = await call(s.url, 'POST', `/orders/${id}/pay`, { json: { paymentRef: 'p1' }, headers: who });
      expect(r.status).toBe(403);
      expect(r.body.code).toBe('forbidden');
    }
    const paid = await call(s.url, 'POST', `/orders/${id}/pay`, { json: { paymentRef: 'p1' }, headers: billing });
    expect(paid.status).toBe(200);
    expect(paid.body.status).toBe('paid');
    const history = await call(s.url, 'GET', `/orders/${id}/history`, { headers: ann.h });
    expect(history.body.data.map((h: { transition: string; actor: string }) => [h.transition, h.actor])).toEqual([
      ['place', ann.id],
      ['pay', 'staff-billing'],
    ]);
  });

  it('a field readable by some roles is hidden from others, and cannot be filtered on by them', async () => {
    const noted = await call(s.url, 'PATCH', `/customers/${ann.id}`, { json: { notes: 'VIP' }, headers: support });
    expect(noted.status).toBe(200);
    const self = await call(s.url, 'GET', `/customers/${ann.id}`, { headers: ann.h });
    expect(self.status).toBe(200);
    expect(self.body).not.toHaveProperty('notes');
    expect(self.body).toHaveProperty('blocked', false);
    const byStaff = await call(s.url, 'GET', `/customers/${ann.id}`, { headers: staff });
    expect(byStaff.body).toHaveProperty('notes', 'VIP');
    expect(self.body.email).toBe('ann@example.com');
    const other = await call(s.url, 'GET', `/customers/${bob.id}`, { headers: ann.h });
    expect(other.status).toBe(404);
  });

  it('the OpenAPI document names both schemes and each operation’s security', async () => {
    const doc = (await call(s.url, 'GET', '/openapi.json')).body;
    expect(doc.components.securitySchemes).toMatchObject({
      key: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
      token: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
    });
    expect(doc.paths['/orders'].get.security).toEqual([{ key: [] }, { token: [] }]);
    expect(doc.paths['/orders'].get.responses['401']).toBeDefined();
  });
});

/** An order of `who`, placed by them and paid by billing. */
const paidOrder = async (who: Record<string, string>) => {
  const id = (await order(who)).body.id as string;
  expect((await call(s.url, 'POST', `/orders/${id}/place`, { headers: who })).status).toBe(200);
  const paid = await call(s.url, 'POST', `/orders/${id}/pay`, { json: { paymentRef: 'p' }, headers: billing });
  expect(paid.status).toBe(200);
  return id;
};
const refund = (id: string, who: Record<string, string>) =>
  call(s.url, 'POST', `/orders/${id}/refund-request`, { json: { reason: 'broken' }, headers: who });
const events = () => s.countRows('_ninefold_events');

describe('the refund request handler reads orders as its caller (ctx.records)', () => {
  it("another customer's paid order → 404 exactly like a missing one, and no event", async () => {
    const bobs = await paidOrder(bob.h);
    const before = await events();
    const theirs = await refund(bobs, ann.h);
    const missing = 'ord_01JD7X3K9Q2M4N6P8R0S2T4V6W';
    const absent = await refund(missing, ann.h);
    expect(theirs.status, theirs.text).toBe(404);
    expect(theirs.body.code).toBe('not_found');
    expect(theirs.text.replaceAll(bobs, 'X')).toBe(absent.text.replaceAll(missing, 'X'));
    expect(await events()).toBe(before);
  });

  it("another customer's cart order → 404, not a 409 that names its state", async () => {
    const bobs = (await order(bob.h)).body.id as string;
    const theirs = await refund(bobs, ann.h);
    expect(theirs.status, theirs.text).toBe(404);
    expect(theirs.text).not.toContain('cart');
  });

  it('her own cart order → 409 invalid_transition; her own paid order → 202 and one event; staff may ask too', async () => {
    const cart = (await order(ann.h)).body.id as string;
    const own = await refund(cart, ann.h);
    expect(own.status).toBe(409);
    expect(own.body.code).toBe('invalid_transition');
    const paid = await paidOrder(ann.h);
    const before = await events();
    const asked = await refund(paid, ann.h);
    expect(asked.status, asked.text).toBe(202);
    expect(asked.body).toEqual({ order: paid, status: 'refund-requested' });
    expect(await events()).toBe(before + 1);
    expect((await refund(paid, support)).status).toBe(202);
  });

  it('a blocked customer is refused (403 customer_blocked): the handler sees her own block', async () => {
    const paid = await paidOrder(bob.h);
    const block = await call(s.url, 'PATCH', `/customers/${bob.id}`, { json: { blocked: true }, headers: support });
    expect(block.status).toBe(200);
    const r = await refund(paid, bob.h);
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('customer_blocked');
    expect((await refund(paid, staff)).body.code).toBe('customer_blocked');
    await call(s.url, 'PATCH', `/customers/${bob.id}`, { json: { blocked: false }, headers: support });
  });

  it('the customer summary (staff only) counts through the door', async () => {
    const r = await call(s.url, 'GET', `/customers/${ann.id}/summary`, { headers: support });
    expect(r.status).toBe(200);
    const all = await call(s.url, 'GET', `/orders?customer=${ann.id}&count=true&limit=1`, { headers: support });
    expect(r.body).toMatchObject({ customer: ann.id, orders: all.body.total });
  });
});

describe('deny by default and field write rights in the order desk', () => {
  it('a customer may not create customers (no rule for them), nor delete one', async () => {
    const made = await call(s.url, 'POST', '/customers', {
      json: { email: 'eve@example.com', fullName: 'Eve' },
      headers: ann.h,
    });
    expect(made.status).toBe(403);
    expect(made.body.code).toBe('forbidden');
    const gone = await call(s.url, 'DELETE', `/customers/${ann.id}`, { headers: ann.h });
    expect(gone.status).toBe(403);
  });

  it('a customer may not set their own tier or unblock themself: 422 read_only_field naming both', async () => {
    const r = await call(s.url, 'PATCH', `/customers/${ann.id}`, {
      json: { blocked: false, tier: 'enterprise' },
      headers: ann.h,
    });
    expect(r.status).toBe(422);
    expect(r.body.code).toBe('read_only_field');
    expect(r.body.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual(['#/blocked', '#/tier']);
    expect((await call(s.url, 'GET', `/customers/${ann.id}`, { headers: staff })).body.tier).toBe('free');
    const own = await call(s.url, 'PATCH', `/customers/${ann.id}`, {
      json: { phone: '+44 20 7946 0000' },
      headers: ann.h,
    });
    expect(own.status).toBe(200);
    const bySupport = await call(s.url, 'PATCH', `/customers/${ann.id}`, { json: { tier: 'pro' }, headers: support });
    expect(bySupport.status).toBe(200);
    expect(bySupport.body.tier).toBe('pro');
  });

  it('only the timer expires an order: POST /orders/{id}/expire → 403 even for admin', async () => {
    const id = (await order(ann.h)).body.id as string;
    expect((await call(s.url, 'POST', `/orders/${id}/place`, { headers: ann.h })).status).toBe(200);
    for (const who of [ann.h, staff]) {
      expect((await call(s.url, 'POST', `/orders/${id}/expire`, { headers: who })).status).toBe(403);
    }
  });

  it("the README's walk-through with one staff key (admin, billing, support) still works", async () => {
    const key = {
      'x-api-key': (await issueApiKey(s.store, { subject: 'readme', roles: ['admin', 'billing', 'support'] })).key,
    };
    const cus = await call(s.url, 'POST', '/customers', {
      json: { email: 'lee@example.com', fullName: 'Ann Lee' },
      headers: key,
    });
    expect(cus.status).toBe(201);
    const found = await call(s.url, 'GET', '/customers?email=lee@example.com', { headers: key });
    expect(found.body.data[0].id).toBe(cus.body.id);
    const tier = await call(s.url, 'PATCH', `/customers/${cus.body.id}`, {
      json: { tier: 'pro' },
      headers: { ...key, 'if-match': '"r1"' },
    });
    expect(tier.status).toBe(200);
    const prd = await call(s.url, 'POST', '/products', {
      json: { sku: 'MUG-2', name: 'Mug', price: '9.90' },
      headers: key,
    });
    expect(prd.status).toBe(201);
    const ord = await call(s.url, 'POST', '/orders', {
      json: { customer: cus.body.id, lines: [{ product: prd.body.id, qty: 2 }] },
      headers: key,
    });
    expect(ord.status).toBe(201);
    const path = `/orders/${ord.body.id}`;
    expect((await call(s.url, 'POST', `${path}/place`, { headers: key })).status).toBe(200);
    expect((await call(s.url, 'POST', `${path}/pay`, { json: { paymentRef: 'pay_123' }, headers: key })).status).toBe(
      200,
    );
    expect((await call(s.url, 'GET', `${path}/history`, { headers: key })).body.data).toHaveLength(2);
    const busy = await call(s.url, 'DELETE', `/customers/${cus.body.id}`, { headers: key });
    expect(busy.status).toBe(409);
    expect(busy.body.code).toBe('reference_in_use');
    expect((await call(s.url, 'DELETE', path, { headers: key })).status).toBe(204);
  });
});
