import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initCommand, SCHEMA_URL, schemaHint, serviceName } from '../src/cli/init.ts';
import { checkFile } from '../src/spec/check.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const built = join(root, 'dist/cli/init.js');
const sources = ['src/cli/init.ts', 'src/cli/init-template.ts'].map((f) => join(root, f));
const temp = mkdtempSync(join(tmpdir(), 'ninefold-init-'));

const cli = (...args: string[]) =>
  promisify(execFile)('node', [join(root, 'bin/ninefold.js'), ...args], { cwd: temp }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );

beforeAll(() => {
  const stale = !existsSync(built) || sources.some((f) => statSync(f).mtimeMs > statSync(built).mtimeMs);
  if (stale) {
    try {
      execFileSync('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: root, stdio: 'pipe' });
    } catch {
      // tsc still emits when other files have type errors; the CLI tests below need only dist/cli.
    }
  }
});

afterAll(() => rmSync(temp, { recursive: true, force: true }));

describe('ninefold init', () => {
  it('writes a service.yaml that checks with zero errors, and refuses to overwrite it', async () => {
    const dir = join(temp, 'in-process');
    expect(await initCommand.run([dir])).toBe(0);
    const file = join(dir, 'service.yaml');
    const text = readFileSync(file, 'utf8');
    expect(text.split('\n')[0]).toBe(`# yaml-language-server: $schema=${SCHEMA_URL}`);
    const { diagnostics, spec } = await checkFile(file);
    expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(spec?.service?.name).toBe('in-process');

    expect(await initCommand.run([dir])).toBe(1);
    expect(readFileSync(file, 'utf8')).toBe(text);
  });

  it('runs from the command line, printing the next commands', async () => {
    const first = await cli('init', 'Shop Floor');
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(join('Shop Floor', 'service.yaml'));
    expect(first.stdout).toMatch(/ninefold check/);
    expect(first.stdout).toMatch(/ninefold docs/);
    expect(first.stdout).toMatch(/ninefold serve/);
    const { diagnostics, spec } = await checkFile(join(temp, 'Shop Floor', 'service.yaml'));
    expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(spec?.service?.name).toBe('shop-floor');

    const second = await cli('init', 'Shop Floor');
    expect(second.code).toBe(1);
    expect(second.stderr).toContain('already exists');
  });

  it('defaults to the current directory', async () => {
    const dir = join(temp, 'cwd');
    execFileSync('mkdir', ['-p', dir]);
    const run = await promisify(execFile)('node', [join(root, 'bin/ninefold.js'), 'init'], { cwd: dir });
    expect(run.stdout).toContain('Wrote service.yaml');
    expect(existsSync(join(dir, 'service.yaml'))).toBe(true);
  });
});

describe('the editor hint', () => {
  it('points at the installed schema, relative to the spec, when Ninefold lives in node_modules', () => {
    const schema = join('/app', 'node_modules', 'ninefold', 'schema', 'ninefold.schema.json');
    expect(schemaHint('/app/api', schema)).toBe('../node_modules/ninefold/schema/ninefold.schema.json');
    expect(schemaHint('/app', schema)).toBe('./node_modules/ninefold/schema/ninefold.schema.json');
  });

  it('is the published URL otherwise', () => {
    expect(schemaHint('/anywhere', '/src/ninefold/schema/ninefold.schema.json')).toBe(SCHEMA_URL);
  });
});

describe('service names from directories', () => {
  it.each([
    ['/x/orders', 'orders'],
    ['/x/My Shop', 'my-shop'],
    ['/x/2fast', 'fast'],
    ['/', 'my-service'],
  ])('%s → %s', (dir, name) => expect(serviceName(dir)).toBe(name));
});
