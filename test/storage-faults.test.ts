import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { call, type JsonAnswer, LEAKS } from './helpers/serve-spec.ts';

// Storage faults under the real CLI (`ninefold serve`), made for real: a WAL that cannot grow (RLIMIT_FSIZE set on
// the running server with prlimit(1): SQLite gets EFBIG, SQLITE_IOERR_WRITE), a full disk (a small tmpfs mounted in
// a mount namespace of the server's own, then filled: ENOSPC, SQLITE_FULL) and a read-only file system (a read-only
// bind mount). The mounts need CAP_SYS_ADMIN; where it is missing those cases are skipped, the prlimit ones still run.
const ROOT = resolve(import.meta.dirname, '..');
const BIN = join(ROOT, 'bin', 'ninefold.js');
const SPEC = `
ninefold: 1
service: { name: faults, title: Faults, purpose: Storage faults under a running server. }
resources:
  Note:
    fields: { title: { type: string, required: true } }
events: { auto: true }
endpoints:
  Note: { operations: [list, get, create] }
`;

const dirs: string[] = [];
const started = new Set<ChildProcess>();
afterAll(() => {
  for (const child of started) if (child.exitCode === null) child.kill('SIGKILL');
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'ninefold-faults-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'service.yaml'), SPEC);
  return dir;
};

const hasPrlimit = process.platform === 'linux' && spawnSync('prlimit', ['--version']).status === 0;
const canMount = (() => {
  if (process.platform !== 'linux') return false;
  const dir = mkdtempSync(join(tmpdir(), 'ninefold-mount-'));
  const probe = spawnSync('unshare', ['-m', '--propagation', 'private', 'mount', '-t', 'tmpfs', 'tmpfs', dir]);
  rmSync(dir, { recursive: true, force: true });
  return probe.status === 0;
})();
/** Runs the rest of the command line with `dir` replaced by a small tmpfs, in a mount namespace of its own. */
const onTmpfs = (dir: string, size: string) => [
  'unshare',
  '-m',
  '--propagation',
  'private',
  'sh',
  '-c',
  `mount -t tmpfs -o size=${size} tmpfs "$0" && cp "$0.yaml" "$0/service.yaml" && exec "$@"`,
  dir,
];
/** Runs the rest of the command line with `dir` read-only. */
const readOnly = (dir: string) => [
  'unshare',
  '-m',
  '--propagation',
  'private',
  'sh',
  '-c',
  'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"',
  dir,
];

interface Cli {
  readonly child: ChildProcess;
  readonly url: string;
  readonly output: () => string;
  readonly exited: Promise<number | null>;
}

/** `ninefold serve` on port 0 over `dir`/faults.db (through `wrap`, a command that ends by running the rest). */
const launch = (dir: string, wrap: string[] = []) => {
  const args = [
    BIN,
    'serve',
    join(dir, 'service.yaml'),
    '--db',
    join(dir, 'faults.db'),
    '--port',
    '0',
    '--log-level',
    'warn',
  ];
  const [command, ...rest] = wrap.length > 0 ? [...wrap, process.execPath, ...args] : [process.execPath, ...args];
  const child = spawn(command as string, rest, { stdio: ['ignore', 'pipe', 'pipe'] });
  started.add(child);
  let out = '';
  child.stdout?.on('data', (c: Buffer) => {
    out += c.toString();
  });
  child.stderr?.on('data', (c: Buffer) => {
    out += c.toString();
  });
  const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
  return { child, output: () => out, exited };
};

/** Starts the server and resolves once it prints its address. */
const serve = (dir: string, wrap: string[] = []): Promise<Cli> => {
  const run = launch(dir, wrap);
  return new Promise((resolve, reject) => {
    run.child.stdout?.on('data', () => {
      const url = /serving at (http:\/\/[^\s]+)/.exec(run.output())?.[1];
      if (url) resolve({ ...run, url });
    });
    void run.exited.then((code) => reject(new Error(`exited ${code} before serving:\n${run.output()}`)));
  });
};

/** Sets the server's file-size limit (soft only, so that it can be lifted again). */
const limitFileSize = (cli: Cli, bytes: number | 'unlimited') => {
  const r = spawnSync('prlimit', ['--pid', String(cli.child.pid), `--fsize=${bytes}:`], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
};
/** Runs a command in the server's mount namespace (where its tmpfs is). */
const inServerMounts = (cli: Cli, args: string[]) =>
  spawnSync('nsenter', ['-t', String(cli.child.pid), '-m', '--', ...args], { encoding: 'utf8' });

const post = (url: string, title: string, key?: string) =>
  call(url, 'POST', '/notes', { json: { title }, ...(key ? { headers: { 'idempotency-key': key } } : {}) });

const expectUnavailable = (answer: JsonAnswer) => {
  expect(answer.status).toBe(503);
  expect(answer.body.code).toBe('storage_unavailable');
  expect(answer.headers.get('retry-after')).toBeTruthy();
  expect(answer.headers.get('content-type')).toContain('application/problem+json');
  expect(answer.text).not.toMatch(LEAKS);
};

/** What a database holds, read the way the server would after a restart (`inspect` runs it where the file is). */
const CHECK = `
const Database = require(${JSON.stringify(join(ROOT, 'node_modules', 'better-sqlite3'))});
const db = new Database(process.argv[1], { readonly: true, fileMustExist: true });
const titles = db.prepare('SELECT title FROM note ORDER BY id').pluck().all();
const events = db.prepare("SELECT record_id FROM _ninefold_events WHERE type = 'Note.created'").pluck().all();
const notes = db.prepare('SELECT id FROM note').pluck().all();
process.stdout.write(JSON.stringify({ integrity: db.pragma('integrity_check', { simple: true }), titles,
  eventsMatch: events.length === notes.length && notes.every((id) => events.includes(id)) }));
`;
const inspect = (path: string, run: (args: string[]) => { stdout: string; status: number | null } = runHere) => {
  const r = run([process.execPath, '-e', CHECK, path]);
  expect(r.status).toBe(0);
  return JSON.parse(r.stdout) as { integrity: string; titles: string[]; eventsMatch: boolean };
};
const runHere = (args: string[]) => spawnSync(args[0] as string, args.slice(1), { encoding: 'utf8' });

/** Nothing like a stack trace, a SQL statement or a library's message in what the process printed. */
const expectNoStack = (output: string) => {
  expect(output).not.toMatch(/^\s+at /m);
  expect(output).not.toMatch(/SqliteError|node:internal/);
};

describe('storage faults under a running server', () => {
  it.skipIf(!hasPrlimit)(
    'a WAL that cannot grow: 503 storage_unavailable with Retry-After, nothing half-written, and writes resume once it can',
    async () => {
      const dir = tempDir();
      const cli = await serve(dir);
      expect((await post(cli.url, 'first')).status).toBe(201);

      limitFileSize(cli, statSync(join(dir, 'faults.db-wal')).size);
      expectUnavailable(await post(cli.url, 'second', 'key-2'));
      expectUnavailable(await post(cli.url, 'second', 'key-2'));

      limitFileSize(cli, 'unlimited');
      // The refused request stored nothing (no record, event or idempotency record): its retry runs again.
      const retried = await post(cli.url, 'second', 'key-2');
      expect(retried.status).toBe(201);
      expect(retried.headers.get('idempotent-replayed')).toBeNull();
      const list = await call(cli.url, 'GET', '/notes');
      expect(list.body.data.map((n: { title: string }) => n.title)).toEqual(['first', 'second']);

      cli.child.kill('SIGTERM');
      expect(await cli.exited).toBe(0);
      expectNoStack(cli.output());
      expect(inspect(join(dir, 'faults.db'))).toEqual({
        integrity: 'ok',
        titles: ['first', 'second'],
        eventsMatch: true,
      });
    },
  );

  it.skipIf(!canMount)(
    'a full disk: 503 storage_unavailable; once space is freed writes resume and the file is intact',
    async () => {
      const dir = tempDir();
      writeFileSync(`${dir}.yaml`, SPEC);
      dirs.push(`${dir}.yaml`);
      const cli = await serve(dir, onTmpfs(dir, '2m'));
      expect((await post(cli.url, 'first')).status).toBe(201);

      const fill = inServerMounts(cli, ['sh', '-c', `cat /dev/zero > "${dir}/filler"`]);
      expect(fill.stderr).toMatch(/No space left/);
      expectUnavailable(await post(cli.url, 'second', 'key-2'));
      expect((await call(cli.url, 'GET', '/notes')).body.data.length).toBe(1);

      inServerMounts(cli, ['rm', `${dir}/filler`]);
      expect((await post(cli.url, 'second', 'key-2')).status).toBe(201);
      expect(inspect(join(dir, 'faults.db'), (args) => inServerMounts(cli, args))).toEqual({
        integrity: 'ok',
        titles: ['first', 'second'],
        eventsMatch: true,
      });
      cli.child.kill('SIGTERM');
      expect(await cli.exited).toBe(0);
      expectNoStack(cli.output());
    },
  );

  it.skipIf(!canMount)('a read-only file system at start: one line naming the database, exit 1', async () => {
    const dir = tempDir();
    const first = await serve(dir);
    expect((await post(first.url, 'first')).status).toBe(201);
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);

    const run = launch(dir, readOnly(dir));
    expect(await run.exited).toBe(1);
    const lines = run.output().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(join(dir, 'faults.db'));
    expect(lines[0]).toMatch(/cannot (open|migrate) the database/);
    expectNoStack(run.output());
  });
});

describe('SIGTERM when storage has failed', () => {
  it.skipIf(!hasPrlimit)(
    'with a full disk: one line, exit 0, and every acknowledged write is there at the next start',
    async () => {
      const dir = tempDir();
      const db = join(dir, 'faults.db');
      const cli = await serve(dir);
      const ids: string[] = [];
      for (const title of ['a', 'b', 'c']) ids.push((await post(cli.url, title)).body.id);

      // No room beyond the database file as it is: the WAL cannot grow and the checkpoint cannot copy into it.
      limitFileSize(cli, statSync(db).size);
      expectUnavailable(await post(cli.url, 'refused'));
      cli.child.kill('SIGTERM');
      expect(await cli.exited).toBe(0);
      const output = cli.output();
      expectNoStack(output);
      const shutdown = output.split('\n').filter((l) => l.includes('shut down'));
      expect(shutdown).toHaveLength(1);
      expect(shutdown[0]).toContain('the WAL was not checkpointed');

      const again = await serve(dir);
      for (const id of ids) expect((await call(again.url, 'GET', `/notes/${id}`)).status).toBe(200);
      expect((await call(again.url, 'GET', '/notes')).body.data.length).toBe(3);
      again.child.kill('SIGTERM');
      expect(await again.exited).toBe(0);
      expect(inspect(db)).toEqual({ integrity: 'ok', titles: ['a', 'b', 'c'], eventsMatch: true });
    },
  );

  it('after the database file was deleted: one line saying so, exit 1', async () => {
    const dir = tempDir();
    const cli = await serve(dir);
    expect((await post(cli.url, 'first')).status).toBe(201);
    rmSync(join(dir, 'faults.db'));
    expectUnavailable(await post(cli.url, 'second'));
    cli.child.kill('SIGTERM');
    expect(await cli.exited).toBe(1);
    const output = cli.output();
    expectNoStack(output);
    const shutdown = output.split('\n').filter((l) => l.includes('shut down'));
    expect(shutdown).toHaveLength(1);
    expect(shutdown[0]).toContain('deleted or replaced');
  });
});
