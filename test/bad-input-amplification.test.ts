import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectProblem } from './helpers/bad-input-spec.ts';
import { call, rawSend, type Served, serveSpec } from './helpers/serve-spec.ts';

// A refusal must not cost more, nor answer more, than a bounded amount, however many errors a body carries.
const SPEC = `
ninefold: 1
service: { name: amplify, title: Amplification, purpose: Bodies built to make the validator report one error per key. }
resources:
  Item:
    idPrefix: itm
    fields:
      name: { type: string, maxLength: 50, required: true }
      age: { type: integer }
      tags: { type: array, items: { type: string } }
      short: { type: array, items: { type: string }, maxItems: 5 }
      lines: { type: array, items: { type: object, fields: { qty: { type: integer } } } }
  Wide:
    fields:
${Array.from({ length: 60 }, (_, i) => `      f${i}: { type: integer }`).join('\n')}
endpoints:
  Item: { path: /items }
  Wide: { path: /wides }
# Past the default cap of 10,000 items an array is refused before validation (400 too_many_items,
# test/limits-sizes.test.ts); raised here so that the validator itself meets the huge arrays.
limits: { size: { items: 1000000 } }
`;

/** The most field errors one answer lists (docs/errors.md). */
const MAX_ERRORS = 50;
/** Far above what 50 errors take, far below what one error per key would take. */
const MAX_ANSWER_BYTES = 16 * 1024;

let s: Served;
let rowsBefore = 0;
beforeAll(async () => {
  s = await serveSpec(SPEC);
});
afterAll(() => s.close({ remove: true }));
beforeEach(async () => {
  rowsBefore = await s.countRows('item');
});
afterEach(async () => {
  expect(await s.countRows('item')).toBe(rowsBefore);
  expect((await call(s.url, 'GET', '/healthz')).status).toBe(200);
});

interface Problem {
  code: string;
  detail: string;
  errors: Array<{ pointer: string; code: string; message: string }>;
  truncated?: boolean;
}

/** POSTs the text as JSON; the answer must be a bounded 422 problem. */
const refused = async (path: string, text: string, code: string): Promise<Problem> => {
  expect(text.length).toBeLessThan(1024 * 1024);
  const r = await rawSend(s.url, 'POST', path, text);
  expectProblem(r, 422, code);
  expect(r.text.length, r.text.slice(0, 300)).toBeLessThan(MAX_ANSWER_BYTES);
  const problem = JSON.parse(r.text) as Problem;
  expect(problem.errors.length).toBeGreaterThan(0);
  expect(problem.errors.length).toBeLessThanOrEqual(MAX_ERRORS);
  return problem;
};

describe('a body with one error per key or item answers a bounded problem', () => {
  it('85,000 unknown keys (902 KB) → 422 unknown_field listing the first 50, truncated, with the count', async () => {
    const body = JSON.stringify(
      Object.fromEntries([['name', 'x'], ...Array.from({ length: 85_000 }, (_, i) => [`k${i}`, 1])]),
    );
    expect(body.length).toBeGreaterThan(900_000);
    const problem = await refused('/items', body, 'unknown_field');
    expect(problem.errors).toHaveLength(MAX_ERRORS);
    expect(problem.errors[0]).toEqual({
      pointer: '#/k0',
      code: 'unknown_field',
      message: 'k0 is not a field of this resource',
    });
    expect(problem.errors.at(-1)?.pointer).toBe('#/k49');
    expect(problem.truncated).toBe(true);
    expect(problem.detail).toContain('85000');
  });

  it('300,000 items of the wrong type in an array without maxItems → 422, bounded, truncated', async () => {
    const problem = await refused(
      '/items',
      JSON.stringify({ name: 'x', tags: Array.from({ length: 300_000 }, () => 1) }),
      'validation_failed',
    );
    expect(problem.errors[0]).toMatchObject({ pointer: '#/tags/0', code: 'invalid_type' });
    expect(problem.truncated).toBe(true);
  });

  it('300,000 items in an array of at most 5 → 422 invalid_count at the array, its items not checked', async () => {
    const problem = await refused(
      '/items',
      JSON.stringify({ name: 'x', short: Array.from({ length: 300_000 }, () => 1) }),
      'validation_failed',
    );
    expect(problem.errors).toEqual([
      { pointer: '#/short', code: 'invalid_count', message: 'must NOT have more than 5 items' },
    ]);
    expect(problem.truncated).toBe(true);
  });

  it('60,000 nested objects with an unknown key each → 422 listing the first 50 with their pointers', async () => {
    const problem = await refused(
      '/items',
      JSON.stringify({ name: 'x', lines: Array.from({ length: 60_000 }, () => ({ q: 1 })) }),
      'validation_failed',
    );
    expect(problem.errors).toHaveLength(MAX_ERRORS);
    expect(problem.errors[1]).toEqual({
      pointer: '#/lines/1/q',
      code: 'unknown_field',
      message: 'q is not a field of this resource',
    });
    expect(problem.truncated).toBe(true);
    expect(problem.detail).toContain('60000');
  });

  it('one unknown key of 900 KB → 422 unknown_field that does not echo the key', async () => {
    const problem = await refused('/items', JSON.stringify({ name: 'x', ['k'.repeat(900_000)]: 1 }), 'unknown_field');
    expect(problem.errors).toEqual([
      { pointer: '#', code: 'unknown_field', message: 'a key of 900000 characters is not a field of this resource' },
    ]);
    expect(problem.truncated).toBeUndefined();
  });
});

describe('the cap leaves ordinary refusals as they were', () => {
  it('a small body still gets every error at once (B3), without truncated', async () => {
    const problem = await refused(
      '/items',
      JSON.stringify({ name: 5, age: 'x', tags: 'y', lines: [{ qty: 'z' }], nmae: 1 }),
      'validation_failed',
    );
    expect(problem.errors.map((e) => e.pointer).sort()).toEqual(
      ['#/age', '#/lines/0/qty', '#/name', '#/nmae', '#/tags'].sort(),
    );
    expect(problem.truncated).toBeUndefined();
  });

  it('60 wrong fields of a resource that has 60 → the first 50 listed, truncated, the count in detail', async () => {
    const body = JSON.stringify(Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`f${i}`, 'x'])));
    const problem = await refused('/wides', body, 'validation_failed');
    expect(problem.errors).toHaveLength(MAX_ERRORS);
    expect(problem.truncated).toBe(true);
    expect(problem.detail).toContain('60');
  });

  it('51 unknown keys → unknown_field with the first 50 and truncated', async () => {
    const body = JSON.stringify(Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`u${i}`, 1])));
    const problem = await refused('/wides', body, 'unknown_field');
    expect(problem.errors).toHaveLength(MAX_ERRORS);
    expect(problem.truncated).toBe(true);
  });
});
