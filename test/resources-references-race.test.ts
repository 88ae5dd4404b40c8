import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type Served, serveSpec } from './helpers/serve-spec.ts';

// Issue 16: a reference was checked before the write, so with several writers (PostgreSQL: transactions run side
// by side) a delete committed between a create's check and its insert left the new record pointing at nothing.
// Here creates that refer to a record race its delete, round after round; whatever wins, no reference dangles.
const SPEC = `
ninefold: 1
service: { name: refrace }
resources:
  Shelf:
    fields:
      name: { type: string }
  Book:
    fields:
      title: { type: string }
      shelf: { type: ref, to: Shelf, required: true }
endpoints:
  Shelf: { operations: [get, create, delete], path: /shelves }
  Book:
    operations: [get, list, create]
    path: /books
    list: { filter: [shelf] }
`;

const ROUNDS = 30;
const CREATES = 6;

let s: Served;
beforeAll(async () => {
  s = await serveSpec(SPEC);
});
afterAll(() => s.close({ remove: true }));

describe('a delete racing the creates that refer to the record', () => {
  it('never leaves a reference to a deleted record: the delete waits for them (409) or they find nothing (422)', async () => {
    const outcomes = { deleted: 0, refused: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      const shelf = (await call(s.url, 'POST', '/shelves', { json: { name: `s${round}` } })).body.id as string;
      const creates = Array.from({ length: CREATES }, (_, i) =>
        call(s.url, 'POST', '/books', { json: { title: `b${round}-${i}`, shelf } }),
      );
      const removal = call(s.url, 'DELETE', `/shelves/${shelf}`);
      const [books, removed] = await Promise.all([Promise.all(creates), removal]);
      const stored = (await call(s.url, 'GET', `/books?shelf=${shelf}&limit=100`)).body.data as unknown[];
      const created = books.filter((b) => b.status === 201).length;
      expect(books.every((b) => b.status === 201 || (b.status === 422 && b.body.code === 'invalid_reference'))).toBe(
        true,
      );
      expect(stored).toHaveLength(created);
      if (removed.status === 204) {
        // The shelf is gone: no book may refer to it.
        outcomes.deleted++;
        expect(created, `round ${round}: books on a deleted shelf`).toBe(0);
      } else {
        outcomes.refused++;
        expect(removed.status).toBe(409);
        expect(removed.body.code).toBe('reference_in_use');
        expect(created).toBeGreaterThan(0);
        expect((await call(s.url, 'GET', `/shelves/${shelf}`)).status).toBe(200);
      }
    }
    expect(outcomes.deleted + outcomes.refused).toBe(ROUNDS);
  });
});
