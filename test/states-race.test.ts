import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type Served } from './helpers/serve-spec.ts';
import { historyOf, serveStates } from './helpers/serve-states.ts';

// S4–S6: many clients take a transition on one record at the same moment, over real HTTP connections. Each test
// makes its own records and counts only them. In one process each request's read, check and write run alone in
// its transaction, so the compare-and-set is the second guard: let reads interleave with writes (no transaction,
// a turn of the event loop between check and write) and these tests stay green with it and go red without it.
const SPEC = `
ninefold: 1
service: { name: approvals, title: Approvals, purpose: Race tests of state transitions. }
resources:
  Request:
    idPrefix: req
    fields:
      title: { type: string, required: true }
    states:
      initial: pending
      final: [approved, rejected]
      transitions:
        approve: { from: pending, to: approved }
        reject: { from: pending, to: rejected }
endpoints:
  Request: { operations: [list, get, create], path: /requests }
`;

const ROUNDS = 20;
const CLIENTS = 50;
/** Rounds of the on-disk check: it is about what is kept, not about the race. */
const DISK_ROUNDS = 5;

let s: Served;
beforeAll(async () => {
  s = await serveStates(SPEC);
});
afterAll(() => s.close({ remove: true }));

const newRequest = async (title: string) => {
  const r = await call(s.url, 'POST', '/requests', { json: { title } });
  expect(r.status).toBe(201);
  expect(r.body.status).toBe('pending');
  return r.body.id as string;
};

/** 25 approve and 25 reject, interleaved. */
const mixed = () => Array.from({ length: CLIENTS }, (_, i) => (i % 2 ? 'reject' : 'approve'));

/** Fires every transition at once; each fetch is its own request, spread over many keep-alive connections. */
const fireAll = (id: string, transitions: string[]) =>
  Promise.all(
    transitions.map((t) => call(s.url, 'POST', `/requests/${id}/${t}`, { json: {} }).then((r) => ({ t, ...r }))),
  );

describe(`${CLIENTS} concurrent transitions on one record, ${ROUNDS} rounds`, () => {
  it('same transition: exactly one 200, the rest 409 invalid_transition, one history entry', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const id = await newRequest(`same ${round}`);
      const answers = await fireAll(
        id,
        Array.from({ length: CLIENTS }, () => 'approve'),
      );
      const ok = answers.filter((a) => a.status === 200);
      const refused = answers.filter((a) => a.status === 409);
      expect(ok.length, `round ${round}`).toBe(1);
      expect(refused.length, `round ${round}: ${answers.map((a) => a.status).join(',')}`).toBe(CLIENTS - 1);
      for (const a of refused) {
        expect(a.body).toMatchObject({ code: 'invalid_transition', currentState: 'approved', allowedTransitions: [] });
      }
      expect(ok[0]?.body.status).toBe('approved');
      expect((await call(s.url, 'GET', `/requests/${id}`)).body.status).toBe('approved');
      const history = await historyOf(s.url, `/requests/${id}`);
      expect(history.map((h) => [h.transition, h.from, h.to])).toEqual([['approve', 'pending', 'approved']]);
    }
  });

  it('competing transitions (25 approve vs 25 reject): one winner, and state and history agree with it', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const id = await newRequest(`compete ${round}`);
      const answers = await fireAll(id, mixed());
      const ok = answers.filter((a) => a.status === 200);
      expect(ok.length, `round ${round}`).toBe(1);
      const winner = ok[0] as (typeof answers)[number];
      const final = winner.t === 'approve' ? 'approved' : 'rejected';
      expect(winner.body.status).toBe(final);
      for (const a of answers.filter((x) => x !== winner)) {
        expect(a.status).toBe(409);
        expect(a.body).toMatchObject({ code: 'invalid_transition', currentState: final });
      }
      expect((await call(s.url, 'GET', `/requests/${id}`)).body.status).toBe(final);
      const history = await historyOf(s.url, `/requests/${id}`);
      expect(history.map((h) => [h.transition, h.from, h.to])).toEqual([[winner.t, 'pending', final]]);
    }
  });

  it('every transition that answered 200 is on disk, and no other', async () => {
    const answered: string[] = [];
    const ids: string[] = [];
    for (let round = 0; round < DISK_ROUNDS; round++) {
      const id = await newRequest(`on disk ${round}`);
      ids.push(id);
      for (const a of await fireAll(id, mixed())) if (a.status === 200) answered.push(`${id} ${a.t}`);
    }
    // Read through a connection of its own: what is on disk, for this test's records only.
    const db = new Database(s.dbPath, { readonly: true, fileMustExist: true });
    try {
      const rows = db
        .prepare(
          `SELECT record_id AS id, transition FROM _ninefold_history WHERE record_id IN (${ids.map(() => '?').join(',')})`,
        )
        .all(...ids) as Array<{ id: string; transition: string }>;
      expect(rows.map((r) => `${r.id} ${r.transition}`).sort()).toEqual([...answered].sort());
    } finally {
      db.close();
    }
    expect(answered).toHaveLength(DISK_ROUNDS);
  });
});
