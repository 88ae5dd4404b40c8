import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type Served, serveSpec } from './helpers/serve-spec.ts';

const SPEC = `
ninefold: 1
service: { name: fields, title: Fields, purpose: Every field type and constraint over HTTP. }
resources:
  Item:
    idPrefix: itm
    fields:
      name: { type: string, minLength: 2, maxLength: 5, required: true }
      email: { type: string, format: email }
      site: { type: string, format: uri }
      uuid: { type: string, format: uuid }
      ip: { type: string, format: ipv4 }
      code: { type: string, pattern: "^[A-Z]{3}$" }
      qty: { type: integer, min: 1, max: 10 }
      big: { type: integer }
      ratio: { type: number, min: 0, max: 1 }
      price: { type: decimal, precision: 8, scale: 2 }
      size: { type: enum, values: [s, m, l], default: m }
      day: { type: date }
      at: { type: datetime }
      tags: { type: array, maxItems: 2, items: { type: string, maxLength: 3 } }
      address: { type: object, fields: { city: { type: string, required: true }, zip: { type: string } } }
      meta: { type: json }
      nick: { type: string, nullable: true }
      active: { type: boolean, default: true }
endpoints:
  Item: { operations: [list, get, create, update, delete], path: /items }
`;

let s: Served;
beforeAll(async () => {
  s = await serveSpec(SPEC);
});
afterAll(() => s.close({ remove: true }));

const create = (body: Record<string, unknown>) => call(s.url, 'POST', '/items', { json: { name: 'ok', ...body } });

/** Each bad value answers 422 with the field's pointer, and nothing is written. */
const refused = async (body: Record<string, unknown>, pointer: string, code = 'validation_failed') => {
  const before = await s.countRows('item');
  const r = await create(body);
  expect(r.status, JSON.stringify(body)).toBe(422);
  expect(r.body.code).toBe(code);
  expect(r.body.errors.map((e: { pointer: string }) => e.pointer)).toContain(pointer);
  expect(await s.countRows('item')).toBe(before);
};

describe('every field type round-trips', () => {
  it('a full record comes back exactly as sent, defaults filled', async () => {
    const body = {
      name: 'Ada',
      email: 'ada@example.com',
      site: 'https://example.com/a?b=c',
      uuid: '6f1c3c3e-9d0b-4b8e-8a5c-2d8f1e3a7b10',
      ip: '192.168.0.1',
      code: 'ABC',
      qty: 10,
      big: 9007199254740991,
      ratio: 0.25,
      price: '19.99',
      day: '2026-02-28',
      at: '2026-02-28T12:34:56.789Z',
      tags: ['a', 'b'],
      address: { city: 'Oslo', zip: '0150' },
      meta: { any: [1, 'two', { three: null }], deep: { x: true } },
      nick: null,
    };
    const r = await create(body);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ ...body, size: 'm', active: true });
    const got = await call(s.url, 'GET', `/items/${r.body.id}`);
    expect(got.body).toEqual(r.body);
  });

  it('decimals stay exact strings; a JSON number for a decimal is refused', async () => {
    const r = await create({ price: '123456.78' });
    expect(r.body.price).toBe('123456.78');
    await refused({ price: 19.99 }, '#/price');
    await refused({ price: '19.999' }, '#/price');
    await refused({ price: '1234567.00' }, '#/price');
  });

  it('nullable accepts null and answers null; non-nullable refuses null', async () => {
    const r = await create({ nick: null });
    expect(r.body.nick).toBeNull();
    await refused({ code: null }, '#/code');
  });
});

describe('every constraint is enforced with a pointer', () => {
  it.each([
    [{ email: 'not-an-email' }, '#/email'],
    [{ site: 'not a uri' }, '#/site'],
    [{ uuid: '1234' }, '#/uuid'],
    [{ ip: '300.1.1.1' }, '#/ip'],
    [{ code: 'abc' }, '#/code'],
    [{ name: 'a' }, '#/name'],
    [{ name: 'toolong' }, '#/name'],
    [{ qty: 0 }, '#/qty'],
    [{ qty: 11 }, '#/qty'],
    [{ qty: 1.5 }, '#/qty'],
    [{ ratio: 1.01 }, '#/ratio'],
    [{ size: 'xl' }, '#/size'],
    [{ day: '2026-02-30' }, '#/day'],
    [{ at: '2026-02-28 12:00' }, '#/at'],
    [{ tags: ['a', 'b', 'c'] }, '#/tags'],
    [{ tags: ['long'] }, '#/tags/0'],
    [{ address: { zip: '1' } }, '#/address/city'],
    [{ address: { city: 'x', street: 'y' } }, '#/address/street'],
    [{ active: 'true' }, '#/active'],
  ])('%j is 422 at %s', async (body, pointer) => {
    await refused(body, pointer);
  });

  it('integers beyond ±(2^53−1) are refused with 422', async () => {
    for (const big of ['9007199254740993', '-9007199254740993', '1e300']) {
      const before = await s.countRows('item');
      const r = await call(s.url, 'POST', '/items', {
        body: `{"name":"ok","big":${big}}`,
        headers: { 'content-type': 'application/json' },
      });
      expect(r.status, big).toBe(422);
      expect(['number_out_of_range', 'validation_failed']).toContain(r.body.code);
      expect(await s.countRows('item')).toBe(before);
    }
  });

  it('all failing fields are reported at once, not just the first', async () => {
    const r = await create({ name: 'x', qty: 0, email: 'no', size: 'xl' });
    expect(r.status).toBe(422);
    const pointers = r.body.errors.map((e: { pointer: string }) => e.pointer).sort();
    expect(pointers).toEqual(['#/email', '#/name', '#/qty', '#/size']);
  });

  it('a missing required field is 422 required', async () => {
    const r = await call(s.url, 'POST', '/items', { json: {} });
    expect(r.status).toBe(422);
    expect(r.body.errors).toEqual([{ pointer: '#/name', code: 'required', message: 'name is required' }]);
  });

  it('PATCH is held to the same constraints', async () => {
    const r = await create({ qty: 2 });
    const bad = await call(s.url, 'PATCH', `/items/${r.body.id}`, { json: { qty: 99, tags: ['a', 'b', 'c'] } });
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual(['#/qty', '#/tags']);
    expect((await call(s.url, 'GET', `/items/${r.body.id}`)).body.qty).toBe(2);
  });
});
