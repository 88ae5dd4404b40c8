import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BUILT_IN_ERRORS } from '../src/parts/errors/catalogue.ts';
import { FIELD_ERROR_CODES } from '../src/parts/errors/field-codes.ts';

const doc = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8');
const documented = new Map(
  [...doc.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)].map((m) => [m[1] as string, Number(m[2])] as const),
);

describe('docs/errors.md', () => {
  it('documents every built-in error code with its status', () => {
    for (const [code, entry] of Object.entries(BUILT_IN_ERRORS)) {
      expect(documented.get(code), code).toBe(entry.status);
    }
  });

  it('documents no code that does not exist', () => {
    for (const code of documented.keys()) expect(Object.keys(BUILT_IN_ERRORS)).toContain(code);
  });

  it('lists every field code of errors[] entries, and no other', () => {
    const section = doc.slice(doc.indexOf('## Field codes'), doc.indexOf('## Built-in codes'));
    const listed = [...section.matchAll(/^\| `([a-z_]+)` \|/gm)].map((m) => m[1]);
    expect(listed.sort()).toEqual(Object.keys(FIELD_ERROR_CODES).sort());
  });

  it('gives every code a 4xx or 5xx status', () => {
    for (const entry of Object.values(BUILT_IN_ERRORS)) expect(entry.status).toBeGreaterThanOrEqual(400);
  });
});
