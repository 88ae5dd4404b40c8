import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../src/parts/auth/keys.ts';
import { call, type Served } from './helpers/serve-spec.ts';
import { planOfFile, servePlan } from './helpers/serve-states.ts';

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
  s = await servePlan(await planOfFile('examples/orders/service.yaml'));
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
    const self = await call(s.url, 'GET', `/customers/${ann.id}`, { headers: ann.h });
    expect(self.status).toBe(200);
    expect(self.body).not.toHaveProperty('blocked');
    const byStaff = await call(s.url, 'GET', `/customers/${ann.id}`, { headers: staff });
    expect(byStaff.body).toHaveProperty('blocked', false);
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
