import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../src/parts/auth/keys.ts';
import { call, planOf, type Served, servePlan } from './helpers/serve-spec.ts';

// Deny by default (docs/auth.md, "Per-record rules"): a resource with `auth.rules` refuses every action without a
// rule, owner and list/transition fallbacks aside. A lending library: members borrow, librarians run the desk.
const SPEC = `
ninefold: 1
service: { name: library }
resources:
  Book:
    fields: { title: { type: string, required: true } }
  Loan:
    fields:
      member: { type: string, required: true }
      book: { type: ref, to: Book, required: true }
      note: { type: string }
    states:
      initial: active
      states: { active: {}, returned: {}, lost: {} }
      final: [returned, lost]
      transitions:
        return: { from: active, to: returned }
        lose: { from: active, to: lost }
  Hold:
    fields:
      member: { type: string }
      book: { type: ref, to: Book, required: true }
  Shelf:
    plural: shelves
    fields: { label: { type: string, required: true } }
  Tag:
    fields: { label: { type: string, required: true } }
  Review:
    fields: { text: { type: string, required: true } }
auth:
  schemes: { key: { type: apiKey, in: header, name: X-Api-Key } }
  require: [key]
  roles: { member: Borrows books., librarian: Runs the desk. }
  rules:
    Book: { read: "true", create: "'librarian' in principal.roles" }
    Loan:
      read: "'librarian' in principal.roles || record.member == principal.subject"
      create: "'librarian' in principal.roles"
      update: "'librarian' in principal.roles"
      transitions: { return: "'librarian' in principal.roles || record.member == principal.subject" }
    Hold: { owner: member }
    Shelf: { read: "true" }
    Tag: { create: "true" }
`;

let s: Served;
let ann: Record<string, string>;
let bob: Record<string, string>;
let desk: Record<string, string>;
let book = '';

const as = async (subject: string, roles: string[]) => ({
  'x-api-key': (await issueApiKey(s.store, { subject, roles })).key,
});
const loanOf = async (member: string) => {
  const r = await call(s.url, 'POST', '/loans', { json: { member, book }, headers: desk });
  expect(r.status, r.text).toBe(201);
  return r.body.id as string;
};

beforeAll(async () => {
  s = await servePlan(planOf(SPEC));
  ann = await as('ann', ['member']);
  bob = await as('bob', ['member']);
  desk = await as('desk', ['librarian']);
  const b = await call(s.url, 'POST', '/books', { json: { title: 'Dune' }, headers: desk });
  expect(b.status, b.text).toBe(201);
  book = b.body.id;
});
afterAll(() => s.close({ remove: true }));

describe('an action without a rule is refused', () => {
  it('a member deletes their own active loan → 403 forbidden, and it stays; the librarian too (no delete rule)', async () => {
    const id = await loanOf('ann');
    for (const who of [ann, desk]) {
      const r = await call(s.url, 'DELETE', `/loans/${id}`, { headers: who });
      expect(r.status, r.text).toBe(403);
      expect(r.body.code).toBe('forbidden');
    }
    expect((await call(s.url, 'GET', `/loans/${id}`, { headers: ann })).status).toBe(200);
    expect((await call(s.url, 'DELETE', `/loans/${id}`, { headers: bob })).status).toBe(404);
  });

  it('a transition without its own rule takes the update rule: lose → the librarian only', async () => {
    const id = await loanOf('ann');
    const before = await call(s.url, 'GET', `/loans/${id}`, { headers: desk });
    expect((await call(s.url, 'POST', `/loans/${id}/lose`, { headers: ann })).status).toBe(403);
    // Another member's loan is not there for bob: 404, as for a missing one.
    expect((await call(s.url, 'POST', `/loans/${id}/return`, { headers: bob })).status).toBe(404);
    // Refused either way, the loan did not move: same state, same ETag.
    const after = await call(s.url, 'GET', `/loans/${id}`, { headers: desk });
    expect(after.body.status).toBe('active');
    expect(after.headers.get('etag')).toBe(before.headers.get('etag'));
    expect((await call(s.url, 'POST', `/loans/${id}/lose`, { headers: desk })).status).toBe(200);
    const mine = await loanOf('ann');
    expect((await call(s.url, 'POST', `/loans/${mine}/return`, { headers: ann })).status).toBe(200);
  });

  it('update follows its rule: the member → 403, the librarian → 200', async () => {
    const id = await loanOf('ann');
    expect((await call(s.url, 'PATCH', `/loans/${id}`, { json: { note: 'x' }, headers: ann })).status).toBe(403);
    expect((await call(s.url, 'PATCH', `/loans/${id}`, { json: { note: 'x' }, headers: desk })).status).toBe(200);
  });

  it('create without a rule is refused to everyone (Shelf), and with a rule only to whom it names (Book)', async () => {
    for (const who of [ann, desk])
      expect((await call(s.url, 'POST', '/shelves', { json: { label: 'A' }, headers: who })).status).toBe(403);
    expect((await call(s.url, 'POST', '/books', { json: { title: 'Emma' }, headers: ann })).status).toBe(403);
  });

  it('read without a rule: nobody sees a record, lists are empty (list follows read)', async () => {
    const made = await call(s.url, 'POST', '/tags', { json: { label: 'sci-fi' }, headers: ann });
    expect(made.status, made.text).toBe(201);
    for (const who of [ann, desk]) {
      expect((await call(s.url, 'GET', `/tags/${made.body.id}`, { headers: who })).status).toBe(404);
      const none = await call(s.url, 'GET', '/tags?count=true', { headers: who });
      expect(none.body).toMatchObject({ data: [], total: 0 });
    }
    const loans = await call(s.url, 'GET', '/loans?count=true', { headers: bob });
    expect(loans.body).toMatchObject({ data: [], total: 0 });
  });
});

describe('the owner shortcut gives read, create, update and delete to the owner alone', () => {
  it('a member holds a book for themself, reads, changes and removes it; others get 404', async () => {
    const made = await call(s.url, 'POST', '/holds', { json: { book }, headers: ann });
    expect(made.status, made.text).toBe(201);
    expect(made.body.member).toBe('ann');
    const path = `/holds/${made.body.id}`;
    for (const who of [bob, desk]) expect((await call(s.url, 'GET', path, { headers: who })).status).toBe(404);
    expect((await call(s.url, 'PATCH', path, { json: { book }, headers: ann })).status).toBe(200);
    expect((await call(s.url, 'DELETE', path, { headers: bob })).status).toBe(404);
    expect((await call(s.url, 'DELETE', path, { headers: ann })).status).toBe(204);
  });

  it('holding a book for someone else → 422 read_only_field (no create rule names others)', async () => {
    const r = await call(s.url, 'POST', '/holds', { json: { book, member: 'bob' }, headers: ann });
    expect(r.status).toBe(422);
    expect(r.body.code).toBe('read_only_field');
  });
});

describe('a resource without rules stays open to every caller the endpoints let in', () => {
  it("a member deletes another member's review → 204", async () => {
    const made = await call(s.url, 'POST', '/reviews', { json: { text: 'great' }, headers: bob });
    expect(made.status).toBe(201);
    expect((await call(s.url, 'DELETE', `/reviews/${made.body.id}`, { headers: ann })).status).toBe(204);
  });
});
