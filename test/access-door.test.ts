import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../src/parts/auth/keys.ts';
import { call, planOf, type Served, servePlan } from './helpers/serve-spec.ts';

// ctx.records in detail (docs/auth.md, "Custom handlers"): nested resources, a list rule that is not SQL, hidden
// fields, an operation's roles, writes from a GET handler and a failing handler's rollback.
const H = './test/helpers/door-handlers.ts';
const SPEC = `
ninefold: 1
service: { name: door }
resources:
  Customer:
    fields: { name: { type: string, required: true } }
  Address:
    fields:
      customer: { type: ref, to: Customer, required: true }
      line1: { type: string, required: true }
  Memo:
    fields:
      title: { type: string, required: true }
      secret: { type: string, readableBy: [admin] }
  Ticket:
    fields: { title: { type: string, required: true } }
endpoints:
  Address: { path: "/customers/{customerId}/addresses" }
  Ticket: { overrides: { delete: { roles: [admin] } } }
  custom:
    - { name: createAddress, method: POST, path: /door/addresses, handler: ${H}#createAddress }
    - { name: updateAddress, method: POST, path: "/door/addresses/{id}", handler: ${H}#updateAddress }
    - { name: removeAddress, method: DELETE, path: "/door/addresses/{id}", handler: ${H}#removeAddress }
    - { name: memoTitles, method: GET, path: /door/memos, handler: ${H}#memoTitles }
    - { name: memosBySecret, method: GET, path: /door/memos-by-secret, handler: ${H}#memosBySecret }
    - { name: touchTicket, method: GET, path: /door/touch, handler: ${H}#touchTicket }
    - { name: removeTicket, method: DELETE, path: "/door/tickets/{id}", handler: ${H}#removeTicket }
    - { name: createThenFail, method: POST, path: /door/fail, handler: ${H}#createThenFail }
auth:
  schemes: { key: { type: apiKey, in: header, name: X-Api-Key } }
  require: [key]
  roles: { admin: Everything., member: Their own. }
  rules:
    Customer: { read: "true", create: "'admin' in principal.roles" }
    Address:
      read: "'admin' in principal.roles || record.customer == principal.subject"
      create: "record.customer == principal.subject"
      update: "record.customer == principal.subject"
      delete: "record.customer == principal.subject"
    Memo:
      read: "'admin' in principal.roles || record.title.startsWith(principal.subject)"
      create: "true"
events: { auto: true }
`;

let s: Served;
let admin: Record<string, string>;
const people: Record<string, { id: string; h: Record<string, string> }> = {};

beforeAll(async () => {
  s = await servePlan(planOf(SPEC));
  admin = { 'x-api-key': (await issueApiKey(s.store, { subject: 'root', roles: ['admin'] })).key };
  for (const name of ['ann', 'bob']) {
    const c = await call(s.url, 'POST', '/customers', { json: { name }, headers: admin });
    expect(c.status, c.text).toBe(201);
    const key = await issueApiKey(s.store, { subject: c.body.id, roles: ['member'] });
    people[name] = { id: c.body.id, h: { 'x-api-key': key.key } };
  }
  // Ten memos, four of them titled for ann's subject (the list rule is not SQL: startsWith).
  for (let i = 0; i < 10; i++) {
    const title = i % 3 === 0 ? `${people.ann?.id}-${i}` : `other-${i}`;
    const m = await call(s.url, 'POST', '/memos', { json: { title, secret: 'x' }, headers: admin });
    expect(m.status, m.text).toBe(201);
  }
});
afterAll(() => s.close({ remove: true }));

const ann = () => people.ann as { id: string; h: Record<string, string> };
const bob = () => people.bob as { id: string; h: Record<string, string> };

describe('nested resources through the door', () => {
  it('creates under the parent the body names, with the create rule; another parent → 403', async () => {
    const made = await call(s.url, 'POST', '/door/addresses', {
      json: { customer: ann().id, line1: '1 Main St' },
      headers: ann().h,
    });
    expect(made.status, made.text).toBe(200);
    expect(made.body).toMatchObject({ customer: ann().id, line1: '1 Main St' });
    const listed = await call(s.url, 'GET', `/customers/${ann().id}/addresses`, { headers: ann().h });
    expect(listed.body.data.map((a: { id: string }) => a.id)).toEqual([made.body.id]);
    const theirs = await call(s.url, 'POST', '/door/addresses', {
      json: { customer: bob().id, line1: 'squat' },
      headers: ann().h,
    });
    expect(theirs.status).toBe(403);
  });

  it("updates and deletes the caller's own; another caller gets 404 and nothing changes", async () => {
    const made = await call(s.url, 'POST', '/door/addresses', {
      json: { customer: ann().id, line1: '2 Side St' },
      headers: ann().h,
    });
    const id = made.body.id as string;
    const stolen = await call(s.url, 'POST', `/door/addresses/${id}`, { json: { line1: 'x' }, headers: bob().h });
    expect(stolen.status).toBe(404);
    expect((await call(s.url, 'DELETE', `/door/addresses/${id}`, { headers: bob().h })).status).toBe(404);
    const moved = await call(s.url, 'POST', `/door/addresses/${id}`, { json: { line1: '3 New St' }, headers: ann().h });
    expect(moved.body.line1).toBe('3 New St');
    expect((await call(s.url, 'DELETE', `/door/addresses/${id}`, { headers: ann().h })).status).toBe(204);
    const gone = await call(s.url, 'GET', `/customers/${ann().id}/addresses/${id}`, { headers: ann().h });
    expect(gone.status).toBe(404);
  });
});

describe('lists through the door', () => {
  it('a rule that is not SQL: the first page is full of the caller’s rows, the count only counts them', async () => {
    const r = await call(s.url, 'GET', '/door/memos', { headers: ann().h });
    expect(r.status, r.text).toBe(200);
    expect(r.body.total).toBe(4);
    expect(r.body.titles).toHaveLength(3);
    for (const t of r.body.titles) expect(t.startsWith(ann().id)).toBe(true);
    expect(r.body.secrets).toBe(false);
    const none = await call(s.url, 'GET', '/door/memos', { headers: bob().h });
    expect(none.body).toMatchObject({ titles: [], total: 0 });
    const all = await call(s.url, 'GET', '/door/memos', { headers: admin });
    expect(all.body).toMatchObject({ total: 10, secrets: true });
  });

  it('a filter on a field hidden from the caller → 400 invalid_filter; an admin may', async () => {
    const r = await call(s.url, 'GET', '/door/memos-by-secret', { headers: ann().h });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('invalid_filter');
    expect((await call(s.url, 'GET', '/door/memos-by-secret', { headers: admin })).body.titles).toHaveLength(10);
  });
});

describe('writes through the door', () => {
  it('a GET handler’s write is committed in a transaction of its own, with its event', async () => {
    const events = await s.countRows('_ninefold_events');
    const r = await call(s.url, 'GET', '/door/touch', { headers: ann().h });
    expect(r.status, r.text).toBe(200);
    expect((await call(s.url, 'GET', `/tickets/${r.body.id}`, { headers: admin })).body.title).toBe('touched');
    expect(await s.countRows('_ninefold_events')).toBe(events + 1);
  });

  it('the roles of the generated operation hold: deleting a ticket needs admin (override) → 403, then 204', async () => {
    const t = await call(s.url, 'POST', '/tickets', { json: { title: 'keep' }, headers: ann().h });
    expect((await call(s.url, 'DELETE', `/door/tickets/${t.body.id}`, { headers: ann().h })).status).toBe(403);
    expect((await call(s.url, 'DELETE', `/door/tickets/${t.body.id}`, { headers: admin })).status).toBe(204);
  });

  it('a handler that fails after writing leaves nothing behind: no row, no event', async () => {
    const rows = await s.countRows('ticket');
    const events = await s.countRows('_ninefold_events');
    const r = await call(s.url, 'POST', '/door/fail', { headers: ann().h });
    expect(r.status).toBe(409);
    expect(await s.countRows('ticket')).toBe(rows);
    expect(await s.countRows('_ninefold_events')).toBe(events);
  });
});
