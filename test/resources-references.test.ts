import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../src/parts/auth/keys.ts';
import { call, type Served, serveSpec } from './helpers/serve-spec.ts';

const SPEC = `
ninefold: 1
service: { name: refs }
resources:
  Product:
    fields:
      name: { type: string }
      owner: { type: string }
  Order:
    fields:
      buyer: { type: string }
      favourite: { type: ref, to: Product }
      lines:
        type: array
        items:
          type: object
          fields:
            product: { type: ref, to: Product, required: true }
            qty: { type: integer }
      related: { type: array, items: { type: ref, to: Product } }
      gift: { type: object, fields: { product: { type: ref, to: Product } } }
endpoints:
  Product: { operations: [get, create], path: /products }
  Order: { operations: [get, create, update], path: /orders }
auth:
  schemes: { key: { type: apiKey, in: header, name: X-Api-Key } }
  require: [key]
  roles: { member: Buys things. }
  rules:
    Product: { owner: owner }
    Order: { owner: buyer }
`;

let s: Served;
let ann: Record<string, string>;
let bob: Record<string, string>;
let annsProduct = '';
let bobsProduct = '';
beforeAll(async () => {
  s = await serveSpec(SPEC);
  ann = { 'x-api-key': (await issueApiKey(s.store, { subject: 'ann', roles: ['member'] })).key };
  bob = { 'x-api-key': (await issueApiKey(s.store, { subject: 'bob', roles: ['member'] })).key };
  annsProduct = (await call(s.url, 'POST', '/products', { json: { name: 'lamp' }, headers: ann })).body.id;
  bobsProduct = (await call(s.url, 'POST', '/products', { json: { name: 'desk' }, headers: bob })).body.id;
});
afterAll(() => s.close({ remove: true }));

/** 422 invalid_reference listing exactly these pointers, and no order written. */
const refused = async (method: string, path: string, json: unknown, pointers: string[]) => {
  const before = await s.countRows('order');
  const r = await call(s.url, method, path, { json, headers: bob });
  expect(r.status, JSON.stringify(json)).toBe(422);
  expect(r.body.code).toBe('invalid_reference');
  expect(r.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual(pointers);
  expect(await s.countRows('order')).toBe(before);
  return r;
};

describe('references inside arrays and objects are checked like top-level ones', () => {
  it('refuses an order line whose product does not exist', async () => {
    const r = await refused('POST', '/orders', { lines: [{ product: 'undefined', qty: 1 }] }, ['#/lines/0/product']);
    expect(r.body.errors[0]).toEqual({
      pointer: '#/lines/0/product',
      code: 'invalid_reference',
      message: 'no Product has id undefined',
    });
  });

  it('lists every bad reference: in a line, in an array of refs, in an object, at the top', async () => {
    await refused(
      'POST',
      '/orders',
      {
        favourite: 'prd_missing',
        lines: [{ product: bobsProduct }, { product: 'prd_missing' }],
        related: [bobsProduct, 'prd_missing'],
        gift: { product: 'prd_missing' },
      },
      ['#/favourite', '#/lines/1/product', '#/related/1', '#/gift/product'],
    );
  });

  it('answers a product the caller may not read exactly like a missing one', async () => {
    const hidden = await refused('POST', '/orders', { lines: [{ product: annsProduct }] }, ['#/lines/0/product']);
    const missing = await refused('POST', '/orders', { lines: [{ product: 'prd_missing' }] }, ['#/lines/0/product']);
    expect(hidden.body.errors[0].message.replace(annsProduct, 'ID')).toBe(
      missing.body.errors[0].message.replace('prd_missing', 'ID'),
    );
    expect(hidden.body.detail).toBe(missing.body.detail);
  });

  it('stores good references, and checks them again on update', async () => {
    const good = { lines: [{ product: bobsProduct, qty: 2 }], related: [bobsProduct], gift: { product: bobsProduct } };
    const created = await call(s.url, 'POST', '/orders', { json: good, headers: bob });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject(good);
    const path = `/orders/${created.body.id}`;
    await refused('PATCH', path, { lines: [{ product: bobsProduct }, { product: annsProduct }] }, [
      '#/lines/1/product',
    ]);
    expect((await call(s.url, 'GET', path, { headers: bob })).body.lines).toEqual(good.lines);
  });
});
