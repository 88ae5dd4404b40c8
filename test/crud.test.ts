import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type Served, serveSpec } from './helpers/serve-spec.ts';

const SPEC = `
ninefold: 1
service: { name: shop, title: Shop, purpose: End-to-end CRUD tests. }
resources:
  Customer:
    idPrefix: cus
    fields:
      email: { type: string, format: email, required: true, unique: true }
      name: { type: string, maxLength: 40 }
      tier: { type: enum, values: [free, pro], default: free }
      score: { type: integer, readOnly: true }
  Order:
    idPrefix: ord
    fields:
      customer: { type: ref, to: Customer, required: true }
      note: { type: string }
  Tag:
    idPrefix: tag
    fields:
      owner: { type: ref, to: Customer, onDelete: cascade }
      label: { type: string }
      shelfCode: { type: string }
    indexes: [{ fields: [label, shelfCode], unique: true }]
  Pin:
    idPrefix: pin
    fields:
      owner: { type: ref, to: Customer, onDelete: setNull, nullable: true }
endpoints:
  Customer: { operations: [list, get, create, update, replace, delete], path: /customers, list: { filter: [email] } }
  Order: { operations: [list, get, create, update, delete], path: "/customers/{customerId}/orders" }
  Tag: { operations: [list, get, create, delete], path: /tags }
  Pin: { operations: [get, create], path: /pins }
`;

let s: Served;
beforeAll(async () => {
  s = await serveSpec(SPEC, { logLevel: 'error' });
});
afterAll(() => s.close({ remove: true }));

const newCustomer = async (email: string, extra: Record<string, unknown> = {}) => {
  const r = await call(s.url, 'POST', '/customers', { json: { email, ...extra } });
  expect(r.status).toBe(201);
  return r.body as { id: string; [k: string]: unknown };
};

describe('create, get, list', () => {
  it('POST answers 201 with the record, system fields, defaults, ETag and Location', async () => {
    const r = await call(s.url, 'POST', '/customers', { json: { email: 'ada@example.com', name: 'Ada' } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ email: 'ada@example.com', name: 'Ada', tier: 'free' });
    expect(r.body.id).toMatch(/^cus_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(Date.parse(r.body.createdAt)).not.toBeNaN();
    expect(r.body.updatedAt).toBe(r.body.createdAt);
    expect(r.headers.get('etag')).toBe('"r1"');
    expect(r.headers.get('location')).toBe(`/customers/${r.body.id}`);
    const got = await call(s.url, 'GET', `/customers/${r.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(r.body);
    const list = await call(s.url, 'GET', '/customers?email=ada@example.com');
    expect(list.body).toEqual({ data: [r.body], nextCursor: null });
  });

  it('GET of an unknown or malformed id is a 404 problem', async () => {
    for (const id of ['cus_01ARZ3NDEKTSV4RRFFQ69G5FAV', 'nope', 'ord_01ARZ3NDEKTSV4RRFFQ69G5FAV']) {
      const r = await call(s.url, 'GET', `/customers/${id}`);
      expect(r.status).toBe(404);
      expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(r.body).toMatchObject({ status: 404, code: 'not_found' });
    }
  });
});

describe('update (merge patch), replace, delete with ETag / If-Match', () => {
  it('PATCH merges, null clears an optional field, the revision moves on', async () => {
    const c = await newCustomer('patch@example.com', { name: 'Old' });
    const r = await call(s.url, 'PATCH', `/customers/${c.id}`, { json: { tier: 'pro' } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ email: 'patch@example.com', name: 'Old', tier: 'pro' });
    expect(r.headers.get('etag')).toBe('"r2"');
    const cleared = await call(s.url, 'PATCH', `/customers/${c.id}`, { json: { name: null } });
    expect(cleared.status).toBe(200);
    expect(cleared.body.name).toBeUndefined();
  });

  it('PATCH that nulls a required field is 422 and changes nothing', async () => {
    const c = await newCustomer('req@example.com');
    const r = await call(s.url, 'PATCH', `/customers/${c.id}`, { json: { email: null } });
    expect(r.status).toBe(422);
    expect(r.body.errors[0].pointer).toBe('#/email');
    expect((await call(s.url, 'GET', `/customers/${c.id}`)).headers.get('etag')).toBe('"r1"');
  });

  it('PUT replaces: omitted fields fall back to defaults or are cleared', async () => {
    const c = await newCustomer('put@example.com', { name: 'Gone', tier: 'pro' });
    const r = await call(s.url, 'PUT', `/customers/${c.id}`, { json: { email: 'put2@example.com' } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ email: 'put2@example.com', tier: 'free' });
    expect(r.body.name).toBeUndefined();
  });

  it('a stale If-Match is 412 and writes nothing; a fresh one is 200', async () => {
    const c = await newCustomer('etag@example.com');
    const stale = await call(s.url, 'PATCH', `/customers/${c.id}`, {
      json: { name: 'X' },
      headers: { 'if-match': '"r7"' },
    });
    expect(stale.status).toBe(412);
    expect(stale.body.code).toBe('precondition_failed');
    const fresh = await call(s.url, 'PATCH', `/customers/${c.id}`, {
      json: { name: 'Y' },
      headers: { 'if-match': '"r1"' },
    });
    expect(fresh.status).toBe(200);
    expect(fresh.body.name).toBe('Y');
    const staleDelete = await call(s.url, 'DELETE', `/customers/${c.id}`, { headers: { 'if-match': '"r1"' } });
    expect(staleDelete.status).toBe(412);
    const del = await call(s.url, 'DELETE', `/customers/${c.id}`, { headers: { 'if-match': '"r2"' } });
    expect(del.status).toBe(204);
    expect((await call(s.url, 'GET', `/customers/${c.id}`)).status).toBe(404);
  });
});

describe('fields a client may not write', () => {
  it('read-only and system fields are 422 read_only_field naming each, nothing written', async () => {
    const before = await s.countRows('customer');
    const r = await call(s.url, 'POST', '/customers', {
      json: { email: 'ro@example.com', score: 5, id: 'cus_x', createdAt: '2020-01-01T00:00:00Z' },
    });
    expect(r.status).toBe(422);
    expect(r.body.code).toBe('read_only_field');
    expect(r.body.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual(['#/createdAt', '#/id', '#/score']);
    expect(await s.countRows('customer')).toBe(before);
  });

  it('unknown fields are 422 unknown_field, nothing written', async () => {
    const before = await s.countRows('customer');
    const r = await call(s.url, 'POST', '/customers', { json: { email: 'u@example.com', nmae: 'x' } });
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject({ code: 'unknown_field', errors: [{ pointer: '#/nmae', code: 'unknown_field' }] });
    expect(await s.countRows('customer')).toBe(before);
  });
});

describe('unique and references', () => {
  it('a second record with a unique value is 409 unique_violation naming the field', async () => {
    await newCustomer('dup@example.com');
    const before = await s.countRows('customer');
    const r = await call(s.url, 'POST', '/customers', { json: { email: 'dup@example.com' } });
    expect(r.status).toBe(409);
    expect(r.body).toMatchObject({ code: 'unique_violation', errors: [{ pointer: '#/email' }] });
    expect(await s.countRows('customer')).toBe(before);
  });

  it('a compound unique key taken is 409 naming every field of the key', async () => {
    const first = await call(s.url, 'POST', '/tags', { json: { label: 'red', shelfCode: 'A1' } });
    expect(first.status).toBe(201);
    expect((await call(s.url, 'POST', '/tags', { json: { label: 'red', shelfCode: 'B2' } })).status).toBe(201);
    const before = await s.countRows('tag');
    const r = await call(s.url, 'POST', '/tags', { json: { label: 'red', shelfCode: 'A1' } });
    expect(r.status).toBe(409);
    expect(r.body).toMatchObject({
      code: 'unique_violation',
      detail: 'Another record already has this label and shelfCode.',
      fields: ['label', 'shelfCode'],
      errors: [
        { pointer: '#/label', code: 'unique', message: 'label and shelfCode must be unique together' },
        { pointer: '#/shelfCode', code: 'unique', message: 'label and shelfCode must be unique together' },
      ],
    });
    expect(await s.countRows('tag')).toBe(before);
  });

  it('a ref to a missing record is 422 invalid_reference', async () => {
    const before = await s.countRows('tag');
    const r = await call(s.url, 'POST', '/tags', { json: { owner: 'cus_01ARZ3NDEKTSV4RRFFQ69G5FAV', label: 'x' } });
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject({ code: 'invalid_reference', errors: [{ pointer: '#/owner' }] });
    expect(await s.countRows('tag')).toBe(before);
  });

  it('nested collection: the parent comes from the path, other parents see 404', async () => {
    const c = await newCustomer('nest@example.com');
    const other = await newCustomer('nest2@example.com');
    const r = await call(s.url, 'POST', `/customers/${c.id}/orders`, { json: { note: 'first' } });
    expect(r.status).toBe(201);
    expect(r.body.customer).toBe(c.id);
    expect(r.headers.get('location')).toBe(`/customers/${c.id}/orders/${r.body.id}`);
    expect((await call(s.url, 'GET', `/customers/${c.id}/orders/${r.body.id}`)).status).toBe(200);
    expect((await call(s.url, 'GET', `/customers/${other.id}/orders/${r.body.id}`)).status).toBe(404);
    const list = await call(s.url, 'GET', `/customers/${other.id}/orders`);
    expect(list.body.data).toEqual([]);
    const conflict = await call(s.url, 'POST', `/customers/${c.id}/orders`, { json: { customer: other.id } });
    expect(conflict.status).toBe(422);
    const missing = await call(s.url, 'POST', '/customers/cus_01ARZ3NDEKTSV4RRFFQ69G5FAV/orders', { json: {} });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('not_found');
    expect((await call(s.url, 'GET', '/customers/cus_01ARZ3NDEKTSV4RRFFQ69G5FAV/orders')).status).toBe(404);
  });

  it('deleting a referenced record is 409 reference_in_use (restrict is the default)', async () => {
    const c = await newCustomer('restrict@example.com');
    await call(s.url, 'POST', `/customers/${c.id}/orders`, { json: {} });
    const r = await call(s.url, 'DELETE', `/customers/${c.id}`);
    expect(r.status).toBe(409);
    expect(r.body.code).toBe('reference_in_use');
    expect((await call(s.url, 'GET', `/customers/${c.id}`)).status).toBe(200);
  });

  it('cascade deletes the referencing records; setNull clears the reference', async () => {
    const c = await newCustomer('cascade@example.com');
    const tag = await call(s.url, 'POST', '/tags', { json: { owner: c.id, label: 't' } });
    const pin = await call(s.url, 'POST', '/pins', { json: { owner: c.id } });
    expect([tag.status, pin.status]).toEqual([201, 201]);
    expect((await call(s.url, 'DELETE', `/customers/${c.id}`)).status).toBe(204);
    expect((await call(s.url, 'GET', `/tags/${tag.body.id}`)).status).toBe(404);
    const after = await call(s.url, 'GET', `/pins/${pin.body.id}`);
    expect(after.status).toBe(200);
    expect(after.body.owner).toBeNull();
  });
});

describe('paths and methods', () => {
  it('an unknown path is a 404 problem', async () => {
    const r = await call(s.url, 'GET', '/nowhere');
    expect(r.status).toBe(404);
    expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(r.body).toMatchObject({ status: 404, code: 'not_found', instance: '/nowhere' });
  });

  it('a method the path does not offer is 405 with Allow', async () => {
    const r = await call(s.url, 'DELETE', '/customers');
    expect(r.status).toBe(405);
    expect(r.body.code).toBe('method_not_allowed');
    expect(r.headers.get('allow')?.split(', ').sort()).toEqual(['GET', 'POST']);
    const item = await call(s.url, 'PUT', '/tags/tag_01ARZ3NDEKTSV4RRFFQ69G5FAV', { json: {} });
    expect(item.status).toBe(405);
    expect(item.headers.get('allow')?.split(', ').sort()).toEqual(['DELETE', 'GET']);
  });

  it('405 reaches every known path shape; what no path has stays 404', async () => {
    const id = 'tag_01ARZ3NDEKTSV4RRFFQ69G5FAV';
    // HEAD on a path without GET; a nested path with a parameter and a query string.
    const head = await fetch(`${s.url}/pins`, { method: 'HEAD' });
    expect([head.status, head.headers.get('allow')]).toEqual([405, 'POST']);
    const nested = await call(s.url, 'PUT', `/customers/cus_1/orders?limit=1`);
    expect([nested.status, nested.body.code, nested.body.instance]).toEqual([
      405,
      'method_not_allowed',
      '/customers/cus_1/orders',
    ]);
    expect(nested.headers.get('allow')?.split(', ').sort()).toEqual(['GET', 'POST']);
    // An id longer than the router's parameters, a segment too many, a trailing slash, another method word.
    for (const [method, path] of [
      ['PUT', `/tags/${'x'.repeat(257)}`],
      ['PUT', `/tags/${id}/extra`],
      ['DELETE', '/customers/'],
      ['OPTIONS', '/customers'],
    ] as const) {
      const r = await call(s.url, method, path);
      expect([method, path.slice(0, 40), r.status]).toEqual([method, path.slice(0, 40), 404]);
    }
  });
});
