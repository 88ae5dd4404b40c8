import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderDocs } from '../src/emit/index.ts';
import { call, type Served, serveSpec } from './helpers/serve-spec.ts';

const SPEC = `
ninefold: 1
service: { name: decimals }
resources:
  Product:
    fields:
      price: { type: decimal, precision: 12, scale: 2, min: 0, max: 1000 }
      rate: { type: decimal, precision: 20, scale: 18, max: 0.3 }
      lines:
        type: array
        items: { type: object, fields: { unitPrice: { type: decimal, scale: 2, min: 0.01 } } }
    states:
      initial: listed
      final: [sold]
      transitions:
        sell: { from: listed, to: sold, input: { amount: { type: decimal, scale: 2, min: 0.01, required: true } } }
endpoints:
  Product: { operations: [list, get, create, update], path: /products }
`;

let s: Served;
beforeAll(async () => {
  s = await serveSpec(SPEC);
});
afterAll(() => s.close({ remove: true }));

/** 422 validation_failed with exactly these pointers, each out_of_range, and nothing written. */
const outOfRange = async (method: string, path: string, json: unknown, pointers: string[]) => {
  const before = await s.countRows('product');
  const r = await call(s.url, method, path, { json });
  expect(r.status, JSON.stringify(json)).toBe(422);
  expect(r.body.code).toBe('validation_failed');
  expect(r.body.errors.map((e: { pointer: string; code: string }) => `${e.pointer} ${e.code}`)).toEqual(
    pointers.map((p) => `${p} out_of_range`),
  );
  expect(await s.countRows('product')).toBe(before);
};

describe('min and max of a decimal, compared as decimals', () => {
  it('refuses a create below min or above max, at the field', async () => {
    await outOfRange('POST', '/products', { price: '-5.00' }, ['#/price']);
    await outOfRange('POST', '/products', { price: '1000.01' }, ['#/price']);
    await outOfRange('POST', '/products', { price: '-0.01', lines: [{ unitPrice: '0.00' }] }, [
      '#/price',
      '#/lines/0/unitPrice',
    ]);
  });

  it('compares exactly where floats would round: 0.300000000000000001 is above max 0.3', async () => {
    expect(Number('0.300000000000000001')).toBe(0.3);
    await outOfRange('POST', '/products', { rate: '0.300000000000000001' }, ['#/rate']);
    const ok = await call(s.url, 'POST', '/products', { json: { rate: '0.300000000000000000' } });
    expect(ok.status).toBe(201);
  });

  it('accepts the bounds themselves', async () => {
    const r = await call(s.url, 'POST', '/products', {
      json: { price: '0.00', lines: [{ unitPrice: '0.01' }, { unitPrice: '99.99' }] },
    });
    expect(r.status).toBe(201);
    expect((await call(s.url, 'POST', '/products', { json: { price: '1000' } })).status).toBe(201);
  });

  it('refuses an update and a transition input out of range', async () => {
    const created = await call(s.url, 'POST', '/products', { json: { price: '10.00' } });
    const item = `/products/${created.body.id}`;
    await outOfRange('PATCH', item, { price: '-1' }, ['#/price']);
    await outOfRange('POST', `${item}/sell`, { amount: '0.00' }, ['#/amount']);
    expect((await call(s.url, 'GET', item)).body).toMatchObject({ price: '10.00', status: 'listed' });
    expect((await call(s.url, 'POST', `${item}/sell`, { json: { amount: '0.01' } })).status).toBe(200);
  });

  it('documents the bounds in OpenAPI prose (no keyword a validator would refuse) and in the document', async () => {
    const doc = (await call(s.url, 'GET', '/openapi.json')).body;
    const price = doc.components.schemas.ProductCreate.properties.price;
    expect(price).toMatchObject({ type: 'string', format: 'decimal' });
    expect(price.description).toBe('From 0 to 1000, compared as decimals.');
    expect(doc.components.schemas.Product.properties.rate.description).toBe('At most 0.3, compared as decimals.');
    expect(JSON.stringify(doc)).not.toContain('decimalRange');
    expect(renderDocs(s.plan, 'md')).toContain(
      '| `price` | decimal |  | no |  | min 0; max 1000; precision 12; scale 2 |',
    );
  });
});
