import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPlan } from '../src/plan/build-plan.ts';
import { checkSource } from '../src/spec/check.ts';
import { parseSpecText } from '../src/spec/load.ts';
import { expectProblem } from './helpers/bad-input-spec.ts';
import { call, type Served, servePlan } from './helpers/serve-spec.ts';

// Numbers in a query string are read as JSON writes them; anything else is refused, never read leniently.
const SPEC = `
ninefold: 1
service: { name: numbers, title: Numbers, purpose: Number parameters in query strings. }
resources:
  Reading:
    fields:
      score: { type: number }
endpoints:
  Reading:
    path: /readings
    list: { filter: [score] }
  custom:
    - name: echo
      method: GET
      path: /echo
      handler: ./handlers.mjs#echo
      request: { query: { n: { type: integer }, x: { type: number } } }
`;

const LENIENT = ['0x10', '0b11', '%205', '5%20', '1_000', 'Infinity', '.5', '5.', '%2B5'];

let s: Served;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ninefold-numbers-'));
  writeFileSync(join(dir, 'handlers.mjs'), 'export const echo = async ({ query }) => ({ query });\n');
  const checked = checkSource({ ...parseSpecText(SPEC, join(dir, 'service.yaml')), dir });
  if (!checked.spec) throw new Error(checked.diagnostics.map((d) => d.message).join('\n'));
  s = await servePlan(buildPlan(checked.spec, dir));
});
afterAll(async () => {
  await s.close({ remove: true });
  rmSync(dir, { recursive: true, force: true });
});

describe('number parameters', () => {
  it.each(LENIENT)('a list filter score[gt]=%s → 400 invalid_filter', async (text) => {
    expectProblem(await call(s.url, 'GET', `/readings?score[gt]=${text}`), 400, 'invalid_filter');
  });

  it.each(LENIENT)('a custom endpoint ?n= and ?x= %s → 400 invalid_query', async (text) => {
    expectProblem(await call(s.url, 'GET', `/echo?n=${text}`), 400, 'invalid_query');
    expectProblem(await call(s.url, 'GET', `/echo?x=${text}`), 400, 'invalid_query');
  });

  it('numbers as JSON writes them are read', async () => {
    expect((await call(s.url, 'GET', '/readings?score[gt]=-1.5e2')).status).toBe(200);
    expect((await call(s.url, 'GET', '/echo?n=007&x=-1.5e2')).body).toEqual({ query: { n: 7, x: -150 } });
  });
});
