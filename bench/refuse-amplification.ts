/**
 * How much work and answer a hostile body buys (issue 14 §4.2): the refusal of bodies built to make the
 * validator report one error per key or item, timed in-process: validation and rendering of the problem (medians of
 * 7 runs), and apart from them the JSON parse and body inspection the server's body parser does first. Then over
 * HTTP: four 85,000-key bodies sent at once, and how long a /healthz sent with them waits for its answer.
 * Run: npx tsx bench/refuse-amplification.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createProblemRenderer } from '../src/parts/errors/runtime.ts';
import { createSchema } from '../src/parts/resources/json-schema.ts';
import { buildPlan } from '../src/plan/build-plan.ts';
import { inspectJson } from '../src/runtime/body.ts';
import { createServer } from '../src/runtime/server.ts';
import { compileBodyValidator, SchemaCompiler } from '../src/runtime/validator.ts';
import { checkSource } from '../src/spec/check.ts';
import { parseSpecText } from '../src/spec/load.ts';
import { SqliteStore } from '../src/storage/index.ts';

const SPEC = `
ninefold: 1
service: { name: hostile, title: Hostile input, purpose: Refusal cost. }
resources:
  User:
    fields:
      name: { type: string, maxLength: 50, required: true }
      age: { type: integer }
      tags: { type: array, items: { type: string } }
      short: { type: array, items: { type: string }, maxItems: 5 }
      lines: { type: array, items: { type: object, fields: { qty: { type: integer } } } }
`;

const parsed = parseSpecText(SPEC, 'inline.yaml');
const checked = checkSource({ ...parsed, dir: process.cwd() });
if (!checked.spec) throw new Error('spec has errors');
const plan = buildPlan(checked.spec, process.cwd());
const resource = plan.resourcesByName.get('User');
if (!resource) throw new Error('no User');
const validate = compileBodyValidator(new SchemaCompiler(), createSchema(resource));
const render = createProblemRenderer(plan.errors);

const bodies: Record<string, string> = {
  '85,000 unknown keys': JSON.stringify(
    Object.fromEntries([['name', 'x'], ...Array.from({ length: 85_000 }, (_, i) => [`k${i}`, 1])]),
  ),
  '300,000 wrong array items': JSON.stringify({ name: 'x', tags: Array.from({ length: 300_000 }, () => 1) }),
  '300,000 items over maxItems 5': JSON.stringify({ name: 'x', short: Array.from({ length: 300_000 }, () => 1) }),
  '60,000 objects with an unknown key': JSON.stringify({
    name: 'x',
    lines: Array.from({ length: 60_000 }, () => ({ q: 1 })),
  }),
  'one 900 KB unknown key': JSON.stringify({ name: 'x', ['k'.repeat(900_000)]: 1 }),
};

/** Parses and inspects as the server's body parser does (its share is timed apart), then validates and renders. */
const refuse = (text: string, times: { parse: number[]; refuse: number[] }) => {
  let started = performance.now();
  const body = JSON.parse(text) as unknown;
  const early = inspectJson(body, 32);
  if (early) throw new Error(early.code);
  times.parse.push(performance.now() - started);
  started = performance.now();
  const error = validate(body);
  if (!error) throw new Error('accepted');
  const answer = render(error, '/users');
  times.refuse.push(performance.now() - started);
  return answer;
};

const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]?.toFixed(1) ?? '?';

for (const [name, text] of Object.entries(bodies)) {
  refuse(text, { parse: [], refuse: [] }); // warm-up
  const times = { parse: [] as number[], refuse: [] as number[] };
  let answer = refuse(text, times);
  for (let i = 0; i < 6; i++) answer = refuse(text, times);
  const problem = JSON.parse(answer.body) as { code: string; errors?: unknown[]; moreErrors?: number };
  console.log(
    `${name.padEnd(36)} body ${(text.length / 1024).toFixed(0).padStart(5)} KB  → ${answer.status} ${problem.code.padEnd(18)} ` +
      `errors ${String(problem.errors?.length ?? 0).padStart(6)}${problem.moreErrors ? ` (+${problem.moreErrors} left out)` : ''}  ` +
      `answer ${(answer.body.length / 1024).toFixed(1).padStart(8)} KB  validate+render ${median(times.refuse).padStart(6)} ms  ` +
      `(parse+inspect ${median(times.parse)} ms)`,
  );
}

const dir = mkdtempSync(join(tmpdir(), 'ninefold-amplify-'));
const store = new SqliteStore({ path: join(dir, 'service.db') });
await store.migrate(plan, { allowDataLoss: false });
const app = await createServer(plan, { store, logLevel: 'silent' });
const url = await app.listen({ port: 0, host: '127.0.0.1' });
const hostile = bodies['85,000 unknown keys'] ?? '';
const post = () =>
  fetch(`${url}/users`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: hostile }).then(
    async (r) => (await r.arrayBuffer()).byteLength,
  );
await post(); // warm-up
for (let round = 0; round < 3; round++) {
  const started = performance.now();
  const refusals = Promise.all([post(), post(), post(), post()]);
  const health = await fetch(`${url}/healthz`).then(() => performance.now() - started);
  const sizes = await refusals;
  console.log(
    `HTTP: 4 × 85,000 keys at once: all answered in ${(performance.now() - started).toFixed(0)} ms, ` +
      `${(sizes.reduce((a, b) => a + b, 0) / 1024).toFixed(1)} KB in all; /healthz sent with them answered after ${health.toFixed(0)} ms`,
  );
}
await app.close();
await store.close();
rmSync(dir, { recursive: true, force: true });
