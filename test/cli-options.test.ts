import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');
const SPEC = join(ROOT, 'examples/orders/service.yaml');
const temp = mkdtempSync(join(tmpdir(), 'ninefold-cli-options-'));

/** Runs the built CLI in the temporary folder, where `serve` would create its database by default. */
const cli = (...args: string[]) =>
  promisify(execFile)(process.execPath, [join(ROOT, 'bin/ninefold.js'), ...args], { cwd: temp }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );

const oneLine = (text: string) => text.trimEnd().split('\n').length === 1;

afterAll(() => rmSync(temp, { recursive: true, force: true }));

describe('serve refuses what it cannot do, at once, and writes nothing', () => {
  let busy: Server;
  let busyPort: number;
  beforeAll(async () => {
    busy = createServer();
    await new Promise<void>((done) => busy.listen(0, '127.0.0.1', done));
    busyPort = (busy.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((done) => busy.close(() => done())));

  it.each([['abc'], ['99999'], ['-1'], ['3000.5'], ['']])('--port %j: exit 2, one line, no database', async (port) => {
    const r = await cli('serve', SPEC, `--port=${port}`);
    expect(r.code).toBe(2);
    expect(oneLine(r.stderr)).toBe(true);
    expect(r.stderr).toContain(`--port must be a whole number from 0 to 65535 (got "${port}")`);
    expect(readdirSync(temp)).toEqual([]);
  });

  it('a port in use: exit 1 with one line saying so, and the database file it created is gone', async () => {
    const r = await cli('serve', SPEC, '--port', String(busyPort), '--log-level', 'silent');
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `ninefold serve: cannot listen on 127.0.0.1:${busyPort}: the port is in use (choose another with --port)\n`,
    );
    expect(readdirSync(temp)).toEqual([]);
  });

  it('a PostgreSQL database that does not exist: exit 1, one line naming it and how to create it', async () => {
    const name = `nf_missing_${process.pid}`;
    const r = await cli('serve', SPEC, '--db', `postgres://postgres:secret@127.0.0.1:5432/${name}`);
    expect([r.code, oneLine(r.stderr)]).toEqual([1, true]);
    expect(r.stderr).toContain(`cannot open the database postgres://postgres:***@127.0.0.1:5432/${name}`);
    expect(r.stderr).toContain(`database "${name}" does not exist`);
    expect(r.stderr).toContain('createdb');
    expect(r.stderr).not.toContain('secret');
  });

  it('a PostgreSQL server that refuses connections: exit 1, one line with what the driver said', async () => {
    const r = await cli('serve', SPEC, '--db', 'postgres://postgres@127.0.0.1:1/orders');
    expect([r.code, oneLine(r.stderr)]).toEqual([1, true]);
    expect(r.stderr).toMatch(/cannot open the database postgres:\/\/postgres@127\.0\.0\.1:\d+\/orders: .*ECONNREFUSED/);
  });

  it('a bad --durability or --log-level is refused with the allowed values before anything is written', async () => {
    const durability = await cli('serve', SPEC, '--durability', 'sometimes');
    expect([durability.code, oneLine(durability.stderr)]).toEqual([2, true]);
    expect(durability.stderr).toContain('--durability must be one of normal, full (got "sometimes")');
    const level = await cli('serve', SPEC, '--log-level', 'loud');
    expect(level.stderr).toContain('--log-level must be one of fatal, error, warn, info, debug, trace, silent');
    expect(readdirSync(temp)).toEqual([]);
  });

  it('a bad --db-pool or --db-statement-timeout is refused before anything is written', async () => {
    for (const pool of ['0', 'ten', '2.5', '1001']) {
      const r = await cli('serve', SPEC, '--db-pool', pool);
      expect([r.code, oneLine(r.stderr)]).toEqual([2, true]);
      expect(r.stderr).toContain(`--db-pool must be a whole number from 1 to 1000 (got "${pool}")`);
    }
    for (const timeout of ['0', '-1', 'soon']) {
      const r = await cli('serve', SPEC, `--db-statement-timeout=${timeout}`);
      expect([r.code, oneLine(r.stderr)]).toEqual([2, true]);
      expect(r.stderr).toContain(`--db-statement-timeout must be a number of seconds above 0 (got "${timeout}")`);
    }
    expect(readdirSync(temp)).toEqual([]);
  });
});

describe('the command line reads like its help', () => {
  it('an unknown option gets the nearest known one, not Node’s raw message', async () => {
    const r = await cli('serve', SPEC, '--prot', '3000');
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toBe('ninefold serve: unknown option --prot; did you mean --port? (ninefold serve --help)\n');
    expect((await cli('check', SPEC, '--acess')).stderr).toContain('unknown option --acess; did you mean --access?');
    expect((await cli('srve')).stderr).toContain('unknown command "srve"; did you mean "serve"?');
    expect(readdirSync(temp)).toEqual([]);
  });

  it('check --format xml is refused with the allowed values', async () => {
    const r = await cli('check', SPEC, '--format', 'xml');
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toBe('ninefold check: --format must be one of text, json (got "xml") (ninefold check --help)\n');
  });

  it('an option without its value says which value it needs', async () => {
    const r = await cli('serve', SPEC, '--port');
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('ninefold serve: --port needs a value (N) (ninefold serve --help)\n');
  });

  it.each([
    [
      'serve',
      [
        '--port N',
        'default 3000',
        'env PORT',
        'env NINEFOLD_DATABASE_URL, then NINEFOLD_DB',
        '--db-pool N',
        'env NINEFOLD_DB_POOL',
        '--db-statement-timeout S',
        'one of normal, full',
        'env LOG_LEVEL',
      ],
    ],
    ['check', ['--format F', 'one of text, json', 'default text', '--access']],
    ['init', ['[dir]', 'never overwritten']],
    ['docs', ['--format F', 'one of md, html', '--out FILE']],
    ['openapi', ['--format F', 'one of json, yaml', '--out FILE']],
    ['asyncapi', ['--format F', 'one of json, yaml', '--out FILE']],
    [
      'keys create',
      ['--role R', 'may be repeated', '--expires DURATION', 'env NINEFOLD_DATABASE_URL, then NINEFOLD_DB'],
    ],
    ['keys list', ['--format F', 'one of text, json', 'env NINEFOLD_DATABASE_URL, then NINEFOLD_DB']],
    ['keys revoke', ['[<spec>] <id>', 'env NINEFOLD_DATABASE_URL, then NINEFOLD_DB']],
  ])('%s --help lists its options, defaults, environment variables and exit codes', async (command, expected) => {
    const r = await cli(...command.split(' '), '--help');
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toMatch(new RegExp(`^Usage: ninefold ${command} `));
    for (const text of [...expected, '-h, --help', 'Exit codes: 0 done; 1', '2 the command line was wrong']) {
      expect(r.stdout, text).toContain(text);
    }
  });
});
