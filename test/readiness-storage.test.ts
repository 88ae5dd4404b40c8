import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { type CliServer, startCliServer } from './helpers/cli-server.ts';
import { LEAKS } from './helpers/serve-spec.ts';

// Issue 16: /readyz says whether this instance can do its work, so that a balancer sends requests elsewhere while
// its database cannot take writes, and back once it can, with no restart. Requests meanwhile get a 503 with
// Retry-After, never a 500, and the process stays up.
const SPEC = `
ninefold: 1
service: { name: readiness }
resources:
  Note: { fields: { title: { type: string, required: true } } }
endpoints:
  Note: { operations: [list, create] }
`;

const dir = mkdtempSync(join(tmpdir(), 'ninefold-readiness-'));
const spec = join(dir, 'service.yaml');
writeFileSync(spec, SPEC);
const servers: CliServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  rmSync(dir, { recursive: true, force: true });
});

const answer = async (url: string, method: 'GET' | 'POST', path: string, body?: unknown) => {
  const r = await fetch(`${url}${path}`, {
    method,
    ...(body ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}),
  });
  const text = await r.text();
  if (r.status >= 400) expect(text).not.toMatch(LEAKS);
  return { status: r.status, retryAfter: r.headers.get('retry-after'), code: JSON.parse(text).code as string };
};
const ready = (url: string) => answer(url, 'GET', '/readyz');
const post = (url: string, title: string) => answer(url, 'POST', '/notes', { title });

describe('/readyz while the database cannot take writes', () => {
  it('another process holds the write lock: 503 storage_unavailable, writes 503 busy at once, reads served; all back when it lets go', async () => {
    const db = join(dir, 'locked.db');
    const server = await startCliServer(spec, ['--db', db]);
    servers.push(server);
    expect((await post(server.url, 'before')).status).toBe(201);
    expect((await ready(server.url)).status).toBe(200);

    const locker = new Database(db);
    locker.exec('BEGIN EXCLUSIVE');
    expect(await ready(server.url)).toEqual({ status: 503, retryAfter: '5', code: 'storage_unavailable' });
    // Locked out: a write waits only briefly for the lock (not the whole busy timeout, which stalls the process).
    expect(await post(server.url, 'during')).toEqual({ status: 503, retryAfter: '1', code: 'busy' });
    expect((await answer(server.url, 'GET', '/notes')).status).toBe(200);
    expect((await answer(server.url, 'GET', '/healthz')).status).toBe(200);

    locker.exec('ROLLBACK');
    locker.close();
    expect((await ready(server.url)).status).toBe(200);
    expect((await post(server.url, 'after')).status).toBe(201);
    expect(server.child.exitCode).toBeNull();
    expect(await server.stop()).toBe(0);
  });

  const hasPrlimit = process.platform === 'linux' && spawnSync('prlimit', ['--version']).status === 0;
  it.skipIf(!hasPrlimit)(
    'its WAL cannot grow: 503 storage_unavailable once a write has failed, ready again once a probe write goes through',
    async () => {
      const db = join(dir, 'full.db');
      const server = await startCliServer(spec, ['--db', db]);
      servers.push(server);
      expect((await post(server.url, 'before')).status).toBe(201);
      const limit = (bytes: number | 'unlimited') =>
        expect(spawnSync('prlimit', ['--pid', String(server.child.pid), `--fsize=${bytes}:`]).status).toBe(0);

      limit(statSync(`${db}-wal`).size);
      expect(await post(server.url, 'during')).toEqual({ status: 503, retryAfter: '5', code: 'storage_unavailable' });
      expect(await ready(server.url)).toEqual({ status: 503, retryAfter: '5', code: 'storage_unavailable' });
      expect(await ready(server.url)).toEqual({ status: 503, retryAfter: '5', code: 'storage_unavailable' });

      limit('unlimited');
      expect((await ready(server.url)).status).toBe(200);
      expect((await post(server.url, 'after')).status).toBe(201);
      expect(await server.stop()).toBe(0);
    },
  );
});
