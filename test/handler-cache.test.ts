import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startCliServer } from './helpers/cli-server.ts';

// A TypeScript handler compiled once is kept in node_modules/.cache/ninefold/ for the next start (module-cache.ts).
// Each start is a fresh `ninefold serve` process, and its first request is the custom route.
const SPEC = `
ninefold: 1
service: { name: kept, title: Kept, purpose: A TypeScript handler kept compiled between starts. }
resources:
  Note:
    fields:
      text: { type: string }
endpoints:
  Note:
    path: /notes
  custom:
    - name: greet
      method: GET
      path: /greet
      handler: ./handlers.ts#greet
`;

const dir = mkdtempSync(join(tmpdir(), 'ninefold-handler-cache-'));
// The nearest node_modules above the module holds the cache.
mkdirSync(join(dir, 'node_modules'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const spec = join(dir, 'service.yaml');
writeFileSync(spec, SPEC);
const cacheDir = join(dir, 'node_modules/.cache/ninefold/modules');
const entries = () => readdirSync(cacheDir).filter((name) => name.endsWith('.json'));

const writeHandler = (word: string) => {
  writeFileSync(join(dir, 'words.ts'), `export const word: string = '${word}';\n`);
  writeFileSync(
    join(dir, 'handlers.ts'),
    "import { word } from './words.ts';\nexport const greet = async () => ({ word } as { word: string });\n",
  );
};

/** Starts `ninefold serve` afresh and answers what its first request, GET /greet, got. */
const firstGreeting = async () => {
  const server = await startCliServer(spec, ['--db', join(dir, 'kept.db')]);
  try {
    const answer = await fetch(`${server.url}/greet`);
    return { status: answer.status, body: await answer.json() };
  } finally {
    expect(await server.stop()).toBe(0);
  }
};

describe('a TypeScript handler kept compiled between starts', () => {
  it('is compiled on the first start, then taken from the cache, and its first request is answered', async () => {
    writeHandler('hello');
    expect(await firstGreeting()).toEqual({ status: 200, body: { word: 'hello' } });
    expect(entries()).toHaveLength(1);
    const entry = join(cacheDir, entries()[0] as string);
    const written = statSync(entry).ino;
    expect(await firstGreeting()).toEqual({ status: 200, body: { word: 'hello' } });
    // Not written again: an entry is replaced by a rename, a new file.
    expect(statSync(entry).ino).toBe(written);
  });

  it('is compiled again when a file it imports changed', async () => {
    writeHandler('changed');
    expect(await firstGreeting()).toEqual({ status: 200, body: { word: 'changed' } });
    expect(await firstGreeting()).toEqual({ status: 200, body: { word: 'changed' } });
  });

  it('is compiled again when a tsconfig.json appears above it', async () => {
    const entry = join(cacheDir, entries()[0] as string);
    const kept = readFileSync(entry, 'utf8');
    writeFileSync(join(dir, 'tsconfig.json'), '{ "compilerOptions": {} }\n');
    expect(await firstGreeting()).toEqual({ status: 200, body: { word: 'changed' } });
    expect(readFileSync(entry, 'utf8')).not.toBe(kept);
  });

  it('is compiled again when its entry is corrupt', async () => {
    const entry = join(cacheDir, entries()[0] as string);
    writeFileSync(entry, readFileSync(entry, 'utf8').slice(0, 40));
    expect(await firstGreeting()).toEqual({ status: 200, body: { word: 'changed' } });
    expect(() => JSON.parse(readFileSync(entry, 'utf8'))).not.toThrow();
  });

  it('files changed back to an earlier content are compiled again, not answered from an older entry', async () => {
    writeHandler('hello');
    expect(await firstGreeting()).toEqual({ status: 200, body: { word: 'hello' } });
    expect(entries()).toHaveLength(1);
  });
});
