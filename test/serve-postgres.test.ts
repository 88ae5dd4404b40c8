import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliServer, startCliServer } from './helpers/cli-server.ts';
import { dropSchemas, freshPgUrl, pgExec, schemaOf } from './helpers/postgres.ts';
import { waitFor } from './helpers/wait-for.ts';

// Two `ninefold serve` processes on one PostgreSQL schema, started together: one through --db, the other through
// NINEFOLD_DATABASE_URL. What one instance writes, the other serves; a unique value is taken once across both; a
// key revoked with `ninefold keys revoke` is refused by both; a stream open on one tells of a write made on the other.
const ROOT = resolve(import.meta.dirname, '..');
const SPEC = `
ninefold: 1
service: { name: shared, title: Shared, purpose: Two instances on one database. }
resources:
  Note:
    idPrefix: note
    fields:
      title: { type: string, required: true, unique: true }
auth:
  schemes: { key: { type: apiKey, in: header, name: X-Api-Key } }
  require: [key]
  roles: { admin: Everything }
events:
  auto: true
  stream: { path: /events/stream }
endpoints:
  Note: { operations: [list, get, create] }
`;

const dir = mkdtempSync(join(tmpdir(), 'ninefold-pg-'));
const spec = join(dir, 'service.yaml');
const url = freshPgUrl();
let a: CliServer;
let b: CliServer;
let key: string;

const keys = (...args: string[]) =>
  promisify(execFile)(process.execPath, [join(ROOT, 'bin/ninefold.js'), 'keys', ...args], { cwd: dir });

const call = async (server: CliServer, method: string, path: string, body?: unknown, withKey = key) => {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { 'x-api-key': withKey, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined };
};

beforeAll(async () => {
  writeFileSync(spec, SPEC);
  [a, b] = await Promise.all([
    startCliServer(spec, ['--db', url]),
    startCliServer(spec, [], { NINEFOLD_DATABASE_URL: url, NINEFOLD_DB: '' }),
  ]);
  key = (await keys('create', spec, '--role', 'admin', '--db', url)).stdout.trimEnd().split('\n').pop() ?? '';
});

afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await dropSchemas();
  rmSync(dir, { recursive: true, force: true });
});

describe('serve --db postgres://…, two instances on one database', () => {
  it('migrated the schema once, and each serves what the other wrote', async () => {
    const tables = await pgExec(
      "SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = $1 AND table_name NOT LIKE '\\_ninefold%'",
      [schemaOf(url)],
    );
    expect(tables.rows[0]?.n).toBe(1);
    const created = await call(a, 'POST', '/notes', { title: 'from a' });
    expect(created.status).toBe(201);
    const read = await call(b, 'GET', `/notes/${created.body?.id}`);
    expect(read).toMatchObject({ status: 200, body: { title: 'from a' } });
  });

  it('takes a unique value once across instances', async () => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => call(i % 2 ? a : b, 'POST', '/notes', { title: 'only once' })),
    );
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s !== 201).every((s) => s === 409)).toBe(true);
    for (const r of answers) expect(JSON.stringify(r.body)).not.toMatch(/SELECT|INSERT|postgres|node_modules|at \//i);
  });

  it('a stream open on one instance tells of a write made on the other', async () => {
    let text = '';
    const request = httpRequest(`${a.url}/events/stream`, { headers: { 'x-api-key': key } }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
    });
    request.on('error', () => undefined);
    request.end();
    await waitFor(() => text.length > 0, 'the stream to open');
    const created = await call(b, 'POST', '/notes', { title: 'streamed' });
    await waitFor(
      () => text.includes(String(created.body?.id)),
      () => `the event on the stream, got ${text}`,
    );
    request.destroy();
  });

  it('a key revoked with `ninefold keys revoke --db postgres://…` is refused by both instances', async () => {
    expect((await call(a, 'GET', '/notes')).status).toBe(200);
    expect((await call(b, 'GET', '/notes')).status).toBe(200);
    const id = /^nfk_(key_[0-9a-f]+)_/.exec(key)?.[1] as string;
    await keys('revoke', id, '--db', url);
    expect((await call(a, 'GET', '/notes')).status).toBe(401);
    expect((await call(b, 'GET', '/notes')).status).toBe(401);
  });
});
