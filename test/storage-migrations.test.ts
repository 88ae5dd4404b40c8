import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { StoreError } from '../src/storage/index.ts';
import { SqliteStore } from '../src/storage/sqlite/sqlite-store.ts';
import { call, LEAKS, planOf, serveSpec } from './helpers/serve-spec.ts';

// Type changes and enum changes through a real restart: spec v1 serves a file, records are written over HTTP, the
// server stops, and the next spec is served on the same file.
const spec = (fields: string) => `
ninefold: 1
service: { name: readings, title: Readings, purpose: Type changes across restarts. }
resources:
  Reading:
    idPrefix: rdg
    fields:
      label: { type: string, required: true }
${fields}
endpoints:
  Reading:
    operations: [list, get, create, update]
    list: { filter: [value, amount, kind], sort: [value, amount], pageSize: { default: 100, max: 100 } }
`;
const INTEGERS = spec(`      value: { type: integer }
      amount: { type: integer, unique: true }
      kind: { type: enum, values: [low, high, urgent], default: low }`);
const WIDER = spec(`      value: { type: number }
      amount: { type: decimal, scale: 2, unique: true }
      kind: { type: enum, values: [low, high, urgent], default: low }`);
const NO_URGENT = spec(`      value: { type: integer }
      amount: { type: integer, unique: true }
      kind: { type: enum, values: [low, high], default: low }`);

/** What a refused migration says, opened the way `serve` opens it. */
const refusal = async (dbPath: string, yaml: string): Promise<StoreError> => {
  const store = new SqliteStore({ path: dbPath });
  const error = await store.migrate(planOf(yaml)).catch((e: unknown) => e);
  await store.close();
  expect(error).toBeInstanceOf(StoreError);
  expect((error as StoreError).kind).toBe('migration-refused');
  return error as StoreError;
};

describe('widening a type changes what is stored', () => {
  it('integer → number and integer → decimal: new values are written, old ones read the same, unique still holds', async () => {
    const first = await serveSpec(INTEGERS);
    const old = await call(first.url, 'POST', '/readings', { json: { label: 'old', value: 3, amount: 7 } });
    expect(old.status).toBe(201);
    await first.close();

    const second = await serveSpec(WIDER, { dbPath: first.dbPath });
    const fresh = await call(second.url, 'POST', '/readings', { json: { label: 'new', value: 2.5, amount: '19.99' } });
    expect(fresh.status).toBe(201);
    expect(fresh.body).toMatchObject({ value: 2.5, amount: '19.99' });
    expect(fresh.text).not.toMatch(LEAKS);

    const read = await call(second.url, 'GET', `/readings/${old.body.id}`);
    expect(read.body).toMatchObject({ label: 'old', value: 3, amount: '7' });
    const patched = await call(second.url, 'PATCH', `/readings/${old.body.id}`, {
      json: { value: 3.25, amount: '8.50' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ value: 3.25, amount: '8.50' });

    // Sorted and filtered by value, old and new rows alike; the unique index came through the rebuild.
    const sorted = await call(second.url, 'GET', '/readings?sort=amount');
    expect(sorted.body.data.map((r: { amount: string }) => r.amount)).toEqual(['8.50', '19.99']);
    const filtered = await call(second.url, 'GET', '/readings?value[gt]=3');
    expect(filtered.body.data.map((r: { label: string }) => r.label)).toEqual(['old']);
    const duplicate = await call(second.url, 'POST', '/readings', { json: { label: 'dup', amount: '19.99' } });
    expect(duplicate.status).toBe(409);
    await second.close({ remove: true });
  });
});

describe('a database an earlier version migrated', () => {
  it('is repaired: a number field left in an INTEGER column is rebuilt at the next start', async () => {
    const first = await serveSpec(INTEGERS);
    const old = await call(first.url, 'POST', '/readings', { json: { label: 'old', value: 3, amount: 7 } });
    await first.close();
    // What the earlier migration did for integer → number and integer → decimal: the recorded type, nothing else.
    const db = new Database(first.dbPath);
    db.prepare("UPDATE _ninefold_fields SET type = 'number' WHERE field = 'value'").run();
    db.prepare("UPDATE _ninefold_fields SET type = 'decimal' WHERE field = 'amount'").run();
    db.close();

    const second = await serveSpec(WIDER, { dbPath: first.dbPath });
    const fresh = await call(second.url, 'POST', '/readings', { json: { label: 'new', value: 2.5, amount: '1.25' } });
    expect(fresh.status).toBe(201);
    expect((await call(second.url, 'GET', `/readings/${old.body.id}`)).body).toMatchObject({ value: 3, amount: '7' });
    await second.close({ remove: true });
  });
});

describe('narrowing a type back', () => {
  it('number → integer and decimal → integer: refused while a value is not whole; --allow-data-loss rounds', async () => {
    const first = await serveSpec(WIDER);
    const half = await call(first.url, 'POST', '/readings', { json: { label: 'half', value: 2.5, amount: '19.5' } });
    const whole = await call(first.url, 'POST', '/readings', { json: { label: 'whole', value: 4, amount: '-3.50' } });
    expect([half.status, whole.status]).toEqual([201, 201]);
    await first.close();

    const error = await refusal(first.dbPath, INTEGERS);
    expect(error.message).toContain(
      'Reading.value changes type from number to integer; 1 stored value(s) are not whole',
    );
    expect(error.message).toContain(
      'Reading.amount changes type from decimal to integer; 2 stored value(s) are not whole',
    );
    expect(error.message).toContain('--allow-data-loss rounds');

    // Refused means untouched: the wider spec still serves every value.
    const again = await serveSpec(WIDER, { dbPath: first.dbPath });
    expect((await call(again.url, 'GET', `/readings/${half.body.id}`)).body).toMatchObject({ value: 2.5 });
    await again.close();

    const lossy = await serveSpec(INTEGERS, { dbPath: first.dbPath, allowDataLoss: true });
    // Halves round away from zero: 2.5 → 3, 19.5 → 20, -3.50 → -4.
    expect((await call(lossy.url, 'GET', `/readings/${half.body.id}`)).body).toMatchObject({ value: 3, amount: 20 });
    expect((await call(lossy.url, 'GET', `/readings/${whole.body.id}`)).body).toMatchObject({ value: 4, amount: -4 });
    const written = await call(lossy.url, 'POST', '/readings', { json: { label: 'int', value: 5, amount: 6 } });
    expect(written.status).toBe(201);
    const patched = await call(lossy.url, 'PATCH', `/readings/${half.body.id}`, { json: { value: 7 } });
    expect(patched.status).toBe(200);
    await lossy.close({ remove: true });
  });
});

describe('removing an enum value', () => {
  it('is refused while records hold it, naming resource, field, value and count; --allow-data-loss sets the default', async () => {
    const first = await serveSpec(INTEGERS);
    const urgent = await call(first.url, 'POST', '/readings', { json: { label: 'u1', kind: 'urgent' } });
    await call(first.url, 'POST', '/readings', { json: { label: 'u2', kind: 'urgent' } });
    const high = await call(first.url, 'POST', '/readings', { json: { label: 'h', kind: 'high' } });
    await first.close();

    const error = await refusal(first.dbPath, NO_URGENT);
    expect(error.message).toContain('Reading.kind no longer allows "urgent", which 2 record(s) hold');
    expect(error.message).toContain('--allow-data-loss');

    const lossy = await serveSpec(NO_URGENT, { dbPath: first.dbPath, allowDataLoss: true });
    expect((await call(lossy.url, 'GET', `/readings/${urgent.body.id}`)).body.kind).toBe('low');
    expect((await call(lossy.url, 'GET', `/readings/${high.body.id}`)).body.kind).toBe('high');
    const patched = await call(lossy.url, 'PATCH', `/readings/${urgent.body.id}`, { json: { label: 'u1 again' } });
    expect(patched.status).toBe(200);
    const low = await call(lossy.url, 'GET', '/readings?kind=low');
    expect(low.body.data.length).toBe(2);
    await lossy.close({ remove: true });
  });
});
