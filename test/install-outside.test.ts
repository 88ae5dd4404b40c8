import { execFile, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from './helpers/serve-spec.ts';
import { waitFor } from './helpers/wait-for.ts';

const ROOT = resolve(import.meta.dirname, '..');
const run = promisify(execFile);
const home = mkdtempSync(join(tmpdir(), 'ninefold-user-'));
const project = join(home, 'my-project');
const packageJson = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string };

const npm = (args: string[], cwd: string) =>
  run('npm', args, { cwd, env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false' } });

/** Runs the installed `ninefold` of the user's project, from their folder. */
const ninefold = (...args: string[]) =>
  run(join(project, 'node_modules/.bin/ninefold'), args, { cwd: join(project, 'orders') }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );

// The README's install path: `npm pack` in the clone, `npm install <tarball>` in the user's own folder. The tarball
// is exactly what would be published, so a file left out of package.json `files` fails here. The one liberty:
// better-sqlite3's native module is copied from the clone's build (same version, same Node) instead of compiled
// again, which takes minutes on this machine; every other package comes from npm's cache as a user's would.
beforeAll(async () => {
  mkdirSync(join(project, 'orders'), { recursive: true });
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'my-project', private: true }));
  const { stdout } = await npm(['pack', '--ignore-scripts', '--silent', '--pack-destination', home], ROOT);
  const tarball = join(home, stdout.trim().split('\n').at(-1) ?? '');
  await npm(['install', '--prefer-offline', '--ignore-scripts', tarball], project);
  const build = join(project, 'node_modules/better-sqlite3/build');
  if (!existsSync(build)) cpSync(join(ROOT, 'node_modules/better-sqlite3/build'), build, { recursive: true });
}, 600_000);

afterAll(() => rmSync(home, { recursive: true, force: true }));

describe('Ninefold installed from its packed tarball, outside the clone', () => {
  it('is the install path the README gives', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(readme).toMatch(/^npm pack +# in the clone/m);
    expect(readme).toContain(`npm install /path/to/${packageJson.name}-${packageJson.version}.tgz`);
  });

  it('a service kept inside the clone is not linted by the clone', async () => {
    const inside = mkdtempSync(join(ROOT, 'my-service-'));
    try {
      writeFileSync(join(inside, 'handlers.ts'), 'export const  summary = (ctx:any) =>  ctx\n');
      const lint = await run(join(ROOT, 'node_modules/.bin/biome'), ['ci', inside], { cwd: ROOT }).then(
        () => '',
        (e: { stdout: string; stderr: string }) => `${e.stdout}${e.stderr}`,
      );
      expect(lint).toContain('These paths were provided but ignored');
    } finally {
      rmSync(inside, { recursive: true, force: true });
    }
  });

  it('is installed from the tarball, not linked to the clone', () => {
    const installed = join(project, 'node_modules', packageJson.name);
    expect(JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')).version).toBe(packageJson.version);
    expect(existsSync(join(installed, 'src'))).toBe(false);
    expect(home.startsWith(ROOT)).toBe(false);
  });

  it('init writes the service in the user’s folder, and refuses to overwrite it', async () => {
    const first = await ninefold('init');
    expect(first).toMatchObject({ code: 0, stderr: '' });
    expect(readFileSync(join(project, 'orders/service.yaml'), 'utf8')).toContain('name: orders');
    const again = await ninefold('init');
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already exists; it was left as it is');
  });

  it('check finds no problem in it', async () => {
    const r = await ninefold('check', 'service.yaml');
    expect(r).toMatchObject({ code: 0, stdout: 'service.yaml: no problems found\n' });
  });

  it('serve runs it on SQLite in the user’s folder, docs included', async () => {
    const child = spawn(join(project, 'node_modules/.bin/ninefold'), ['serve', 'service.yaml', '--port', '0'], {
      cwd: join(project, 'orders'),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
    });
    try {
      let url = '';
      await waitFor(
        () => {
          url = /serving at (http:\/\/\S+)/.exec(out)?.[1] ?? '';
          return url !== '';
        },
        () => `ninefold serve to say where it serves; it printed:\n${out}`,
      );
      // What the README says serve prints: the API reference, the nine-part document, the OpenAPI document.
      for (const page of ['/docs', '/docs/spec', '/openapi.json']) expect(out).toContain(`${url}${page}\n`);
      const created = await call(url, 'POST', '/tasks', { json: { title: 'Ship it' } });
      expect(created.status).toBe(201);
      expect((await call(url, 'GET', '/docs/spec')).status).toBe(200);
      expect((await call(url, 'GET', '/docs/js/scalar.js')).status).toBe(200);
      expect(existsSync(join(project, 'orders/orders.db'))).toBe(true);
    } finally {
      const exited = new Promise((done) => child.once('exit', done));
      child.kill('SIGTERM');
      await exited;
    }
  });
});
