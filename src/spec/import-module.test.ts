import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { importModule, ModuleCompileError } from './import-module.ts';

// Inside the clone, so that a package the module imports is found in node_modules as a user's would be.
const dir = mkdtempSync(join(resolve(import.meta.dirname, '../..'), '.import-module-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const write = (name: string, lines: string[]) => {
  const file = join(dir, name);
  mkdirSync(resolve(file, '..'), { recursive: true });
  writeFileSync(file, lines.join('\n'));
  return file;
};

describe('importModule: TypeScript compiled by esbuild, no loader hooks', () => {
  it('runs a module with a relative import and a package, its errors pointing at the .ts lines', async () => {
    write('lib/fail.ts', [
      '// a helper in another folder',
      'export const fail = (n: number): never => {',
      "  throw new Error('failed ' + n);",
      '};',
    ]);
    const entry = write('handlers.ts', [
      "import { parse } from 'yaml';",
      "import { fail } from './lib/fail.ts';",
      'type Input = { n: number };',
      "export const parsed = parse('a: 1') as { a: number };",
      'export const run = (input: Input) => fail(input.n);',
      'export const where = () => [import.meta.url, import.meta.dirname];',
    ]);
    const mod = await importModule(entry);
    expect(mod.parsed).toEqual({ a: 1 });
    expect((mod.where as () => unknown)()).toEqual([pathToFileURL(entry).href, dir]);
    let stack = '';
    try {
      (mod.run as (input: { n: number }) => void)({ n: 7 });
    } catch (error) {
      stack = (error as Error).stack ?? '';
    }
    expect(stack).toContain('failed 7');
    expect(stack).toContain(`${join(dir, 'lib/fail.ts')}:3:`);
    expect(stack).toContain(`${entry}:5:`);
  });

  it('is imported once: a second import answers the same module', async () => {
    const entry = write('once.ts', ['export const made = {};']);
    expect((await importModule(entry)).made).toBe((await importModule(entry)).made);
  });

  it('a syntax error is reported with the file, line and column', async () => {
    const entry = write('broken.ts', ['export const ok = 1;', 'export const x: number = ;']);
    const error = await importModule(entry).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModuleCompileError);
    expect((error as Error).message).toMatch(/broken\.ts:2:26: /);
  });

  it('a package that cannot be found is reported at its import', async () => {
    const entry = write('missing.ts', ["import 'no-such-package-anywhere';"]);
    await expect(importModule(entry)).rejects.toThrow(/missing\.ts:1:8: Could not resolve "no-such-package-anywhere"/);
  });
});
