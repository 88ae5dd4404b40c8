import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../src/parts/auth/keys.ts';
import { buildPlan } from '../src/plan/build-plan.ts';
import { checkSource } from '../src/spec/check.ts';
import { parseSpecText } from '../src/spec/load.ts';
import { call, LEAKS, type Served, servePlan } from './helpers/serve-spec.ts';
import { planOfFile } from './helpers/serve-states.ts';

// Declared events: custom handlers emit them with ctx.emit, in the request's transaction, with the declared
// payload shape; `roles` limits who sees them.
const SECRET = 'declared-test-secret-0123456789abcdefghij';

const eventsOf = async (s: Served, headers: Record<string, string>, type: string) => {
  const r = await call(s.url, 'GET', `/events?limit=100&type=${type}`, { headers });
  expect(r.status).toBe(200);
  return r.body.data as Array<{ id: string; type: string; data: Record<string, unknown> }>;
};

describe('the order desk’s Order.refundRequested', () => {
  let s: Served;
  let staff: Record<string, string>;
  let customer: Record<string, string>;
  let order: string;
  beforeAll(async () => {
    process.env.JWT_SECRET = SECRET;
    s = await servePlan(await planOfFile('examples/orders/service.yaml'));
    staff = { 'x-api-key': (await issueApiKey(s.store, { subject: 'staff', roles: ['admin', 'billing'] })).key };
    const c = await call(s.url, 'POST', '/customers', {
      json: { email: 'ann@example.com', fullName: 'Ann' },
      headers: staff,
    });
    const jwt = await new SignJWT({ roles: ['customer'] })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(c.body.id)
      .setIssuer('https://auth.example.com/')
      .setAudience('orders')
      .setExpirationTime('10m')
      .sign(new TextEncoder().encode(SECRET));
    customer = { authorization: `Bearer ${jwt}` };
    const p = await call(s.url, 'POST', '/products', {
      json: { sku: 'TEA-1', name: 'Tea', price: '4.50' },
      headers: staff,
    });
    order = (
      await call(s.url, 'POST', '/orders', {
        json: { customer: c.body.id, lines: [{ product: p.body.id, qty: 1 }] },
        headers: staff,
      })
    ).body.id;
  });
  afterAll(() => s.close({ remove: true }));

  it('a refused request emits nothing; an accepted one emits its event once, shown to staff only', async () => {
    const early = await call(s.url, 'POST', `/orders/${order}/refund-request`, {
      json: { reason: 'too early' },
      headers: staff,
    });
    expect(early.status).toBe(409);
    expect(await eventsOf(s, staff, 'Order.refundRequested')).toEqual([]);

    expect((await call(s.url, 'POST', `/orders/${order}/place`, { headers: staff })).status).toBe(200);
    const paid = await call(s.url, 'POST', `/orders/${order}/pay`, { json: { paymentRef: 'p-1' }, headers: staff });
    expect(paid.status).toBe(200);
    const asked = await call(s.url, 'POST', `/orders/${order}/refund-request`, {
      json: { reason: 'broken cup' },
      headers: customer,
    });
    expect(asked.status).toBe(202);
    const seen = await eventsOf(s, staff, 'Order.refundRequested');
    expect(seen).toHaveLength(1);
    expect(seen[0]?.data).toEqual({ order, reason: 'broken cup' });
    expect((await call(s.url, 'GET', `/events/${seen[0]?.id}`, { headers: customer })).status).toBe(404);
    expect(await eventsOf(s, customer, 'Order.refundRequested')).toEqual([]);
  });
});

// A spec whose handlers misuse emit, or fail after emitting: nothing may reach the outbox.
const HANDLERS = `
export const good = async (ctx) => { await ctx.emit('Note.flagged', { note: String(ctx.params.id), level: 2 }); return { ok: true }; };
export const thenFail = async (ctx) => { await ctx.emit('Note.flagged', { note: 'x', level: 1 }); ctx.fail('conflict', 'changed my mind'); };
export const wrongShape = async (ctx) => { await ctx.emit('Note.flagged', { note: 'x', level: 'high' }); return { ok: true }; };
export const undeclared = async (ctx) => { await ctx.emit('Note.deleted', { note: 'x' }); return { ok: true }; };
`;
const SPEC = `
ninefold: 1
service: { name: declared-test }
resources:
  Note:
    fields: { text: { type: string } }
events:
  declared:
    Note.flagged:
      payload:
        note: { type: string, required: true }
        level: { type: integer, min: 1, max: 3, required: true }
endpoints:
  Note: { operations: [get, create] }
  custom:
${['good', 'thenFail', 'wrongShape', 'undeclared']
  .map(
    (name) => `    - name: ${name}
      method: POST
      path: /notes/{id}/${name}
      handler: ./handlers.mjs#${name}
      request: { params: { id: { type: string, required: true } } }
      errors: [conflict]`,
  )
  .join('\n')}
    - name: peek
      method: GET
      path: /notes/{id}/peek
      handler: ./handlers.mjs#good
      request: { params: { id: { type: string, required: true } } }
`;

describe('emit from a custom handler', () => {
  let s: Served;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ninefold-declared-'));
    writeFileSync(join(dir, 'handlers.mjs'), HANDLERS);
    const checked = checkSource({ ...parseSpecText(SPEC, join(dir, 'service.yaml')), dir });
    const errors = checked.diagnostics.filter((d) => d.severity === 'error');
    if (!checked.spec || errors.length) throw new Error(errors.map((d) => d.message).join('\n'));
    s = await servePlan(buildPlan(checked.spec, dir));
  });
  afterAll(async () => {
    await s.close({ remove: true });
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes the event when the handler succeeds, and none when it fails or emits a wrong payload', async () => {
    expect((await call(s.url, 'POST', '/notes/n1/thenFail')).status).toBe(409);
    for (const bad of ['wrongShape', 'undeclared']) {
      const r = await call(s.url, 'POST', `/notes/n1/${bad}`);
      expect(r.status).toBe(500);
      expect(r.body.code).toBe('internal');
      expect(r.text).not.toMatch(LEAKS);
    }
    expect(await eventsOf(s, {}, 'Note.flagged')).toEqual([]);
    expect((await call(s.url, 'POST', '/notes/n7/good')).status).toBe(200);
    const seen = await eventsOf(s, {}, 'Note.flagged');
    expect(seen.map((e) => e.data)).toEqual([{ note: 'n7', level: 2 }]);
  });

  it('writes the event of a GET handler (no transaction of its own) by the time the answer comes', async () => {
    expect((await call(s.url, 'GET', '/notes/n8/peek')).status).toBe(200);
    const seen = await eventsOf(s, {}, 'Note.flagged');
    expect(seen.map((e) => e.data)).toContainEqual({ note: 'n8', level: 2 });
  });
});
