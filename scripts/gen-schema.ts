/**
 * Writes schema/ninefold.schema.json from the one definition of the spec language (src/spec/schema.ts).
 * `--check` fails when the committed file is stale.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { buildJsonSchema } from '../src/spec/json-schema.ts';

const target = new URL('../schema/ninefold.schema.json', import.meta.url);
const text = `${JSON.stringify({ $comment: 'Generated from src/spec/schema.ts by `npm run gen`. Do not edit.', ...buildJsonSchema() }, null, 2)}\n`;
if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(target, 'utf8');
  } catch {}
  if (current !== text) {
    process.stderr.write('schema/ninefold.schema.json is stale: run `npm run gen` and commit it.\n');
    process.exit(1);
  }
} else {
  writeFileSync(target, text);
}
