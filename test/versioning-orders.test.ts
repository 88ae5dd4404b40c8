import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../src/parts/auth/keys.ts';
import { buildPlan } from '../src/plan/build-plan.ts';
import { checkSource } from '../src/spec/check.ts';
import { parseSpecText } from '../src/spec/load.ts';
import { call, freshDatabase, type Served, servePlan } from './helpers/serve-spec.ts';
import { testClock } from './helpers/test-clock.ts';
import { waitFor } from './helpers/wait-for.ts';
import { type Receiver, startReceiver } from './helpers/webhook-receiver.ts';

// The order desk as shipped, but its webhooks may reach a receiver on this machine.
const DIR = 'examples/orders';
const text = readFileSync(`${DIR}/service.yaml`, 'utf8').replace(
  'webhooks: { signing: standard-webhooks,',
  'webhooks: { allowPrivateTargets: true, signing: standard-webhooks,',
);
const OLD = { 'api-version': '2026-01-15' };
const NEW = { 'api-version': '2026-09-01' };

let s: Served;
let staff: Record<string, string>;
let receiver: Receiver;
let newer: Receiver;
const clock = testClock(new Date('2026-11-26T12:00:00Z'));

beforeAll(async () => {
  process.env.JWT_SECRET = 'order-desk-test-secret-0123456789abcdef';
  const checked = checkSource({ ...parseSpecText(text, `${DIR}/service.yaml`), dir: DIR });
  expect(checked.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  s = await servePlan(buildPlan(checked.spec as NonNullable<typeof checked.spec>, DIR), {
    dbPath: freshDatabase(),
    webhookPollMs: 50,
    now: clock.now,
  });
  staff = { 'x-api-key': (await issueApiKey(s.store, { subject: 'staff', roles: ['admin'] })).key };
  receiver = await startReceiver();
  newer = await startReceiver();
});
afterAll(async () => {
  await s?.close({ remove: true });
  await receiver?.close();
  await newer?.close();
});

describe('the order desk serves 2026-01-15 (name) and 2026-09-01 (fullName) at once', () => {
  let id: string;

  it('a customer created in the old version reads correctly in the new one and back', async () => {
    const made = await call(s.url, 'POST', '/customers', {
      json: { email: 'ann@example.com', name: 'Ann Lee' },
      headers: { ...staff, ...OLD },
    });
    expect(made.status).toBe(201);
    expect(made.body.name).toBe('Ann Lee');
    expect(made.body).not.toHaveProperty('fullName');
    id = made.body.id;
    const newer = await call(s.url, 'GET', `/customers/${id}`, { headers: { ...staff, ...NEW } });
    expect(newer.body.fullName).toBe('Ann Lee');
    expect(newer.body).not.toHaveProperty('name');
    expect(newer.headers.get('deprecation')).toBeNull();
    const back = await call(s.url, 'GET', `/customers/${id}`, { headers: { ...staff, ...OLD } });
    expect(back.body).toMatchObject({ id, email: 'ann@example.com', name: 'Ann Lee' });
  });

  it('sorts by name in the old version (the newest sorts by fullName)', async () => {
    await call(s.url, 'POST', '/customers', {
      json: { email: 'abe@example.com', fullName: 'Abe Zed' },
      headers: { ...staff, ...NEW },
    });
    const old = await call(s.url, 'GET', '/customers?sort=name', { headers: { ...staff, ...OLD } });
    expect(old.status).toBe(200);
    expect(old.body.data.map((c: { name: string }) => c.name)).toEqual(['Abe Zed', 'Ann Lee']);
    const unknown = await call(s.url, 'GET', '/customers?sort=name', { headers: { ...staff, ...NEW } });
    expect(unknown.status).toBe(400);
  });

  it('filters by ?name= in the old version', async () => {
    const found = await call(s.url, 'GET', '/customers?name=Ann%20Lee', { headers: { ...staff, ...OLD } });
    expect(found.status).toBe(200);
    expect(found.body.data.map((c: { id: string }) => c.id)).toEqual([id]);
    expect(found.body.data[0].name).toBe('Ann Lee');
  });

  it('a validation error in the old version points at /name', async () => {
    const bad = await call(s.url, 'POST', '/customers', {
      json: { email: 'cy@example.com', name: '' },
      headers: { ...staff, ...OLD },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual(['#/name']);
  });

  it("the deprecated version's answers carry Deprecation, Sunset and Link", async () => {
    const old = await call(s.url, 'GET', `/customers/${id}`, { headers: { ...staff, ...OLD } });
    expect(old.headers.get('deprecation')).toBe(`@${Date.parse('2026-09-01T00:00:00Z') / 1000}`);
    expect(old.headers.get('sunset')).toBe('Fri, 15 Jan 2027 00:00:00 GMT');
    expect(old.headers.get('link')).toMatch(/rel="deprecation".*rel="sunset"/);
  });

  it('a webhook endpoint registered in the old version receives name; one registered in the new, fullName', async () => {
    const oldHook = await call(s.url, 'POST', '/webhook-endpoints', {
      json: { url: receiver.url, events: ['Customer.updated'] },
      headers: { ...staff, ...OLD },
    });
    expect(oldHook.status).toBe(201);
    expect(oldHook.body.apiVersion).toBe('2026-01-15');
    const newHook = await call(s.url, 'POST', '/webhook-endpoints', {
      json: { url: newer.url, events: ['Customer.updated'] },
      headers: { ...staff, ...NEW },
    });
    expect(newHook.body.apiVersion).toBe('2026-09-01');
    const patched = await call(s.url, 'PATCH', `/customers/${id}`, {
      json: { fullName: 'Ann Lee-Smith' },
      headers: { ...staff, ...NEW },
    });
    expect(patched.status).toBe(200);
    await waitFor(() => receiver.hits.length >= 1 && newer.hits.length >= 1, 'both deliveries');
    const old = JSON.parse(receiver.hits[0]?.body ?? '{}');
    const inNew = JSON.parse(newer.hits[0]?.body ?? '{}');
    expect(old.data.record.name).toBe('Ann Lee-Smith');
    expect(old.data.record).not.toHaveProperty('fullName');
    expect(old.data.changed).toEqual(['name']);
    expect(inNew.data.record.fullName).toBe('Ann Lee-Smith');
    expect(inNew.data.changed).toEqual(['fullName']);
  });

  it('PATCH moves a webhook endpoint to another version; an unknown one is 422', async () => {
    const hooks = await call(s.url, 'GET', '/webhook-endpoints', { headers: staff });
    const old = hooks.body.data.find((h: { url: string }) => h.url === receiver.url);
    const moved = await call(s.url, 'PATCH', `/webhook-endpoints/${old.id}`, {
      json: { apiVersion: '2026-09-01' },
      headers: staff,
    });
    expect(moved.status).toBe(200);
    expect(moved.body.apiVersion).toBe('2026-09-01');
    const bad = await call(s.url, 'PATCH', `/webhook-endpoints/${old.id}`, {
      json: { apiVersion: '1999-01-01' },
      headers: staff,
    });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].pointer).toBe('#/apiVersion');
  });
});
