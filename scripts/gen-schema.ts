/**
 * Writes, from the one definition of the spec language (src/spec/schema.ts), schema/ninefold.schema.json (the
 * published JSON Schema) and schema/ninefold-validate.mjs (its validator, compiled by Ajv ahead of time so that
 * `check` and `serve` do not compile it at every start). `--check` fails when a committed file is stale.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { Ajv } from 'ajv';
// A CommonJS module: its function is the default export's `default`.
import standalone from 'ajv/dist/standalone/index.js';
import { buildJsonSchema } from '../src/spec/json-schema.ts';
import { SHAPE_VALIDATOR_OPTIONS } from '../src/spec/shape-validator-options.ts';

const GENERATED = 'Generated from src/spec/schema.ts by `npm run gen`. Do not edit.';

const schema = buildJsonSchema();
const ajv = new Ajv({ ...SHAPE_VALIDATOR_OPTIONS, code: { source: true, esm: true } });
const files = [
  {
    target: new URL('../schema/ninefold.schema.json', import.meta.url),
    text: `${JSON.stringify({ $comment: GENERATED, ...schema }, null, 2)}\n`,
  },
  {
    target: new URL('../schema/ninefold-validate.mjs', import.meta.url),
    text: `// ${GENERATED}\n${standalone.default(ajv, ajv.compile(schema))}\n`,
  },
];

let stale = false;
for (const { target, text } of files) {
  if (!process.argv.includes('--check')) {
    writeFileSync(target, text);
    continue;
  }
  let current = '';
  try {
    current = readFileSync(target, 'utf8');
  } catch {}
  if (current !== text) {
    process.stderr.write(
      `${target.pathname.replace(/.*\/schema\//, 'schema/')} is stale: run \`npm run gen\` and commit it.\n`,
    );
    stale = true;
  }
}
if (stale) process.exit(1);
