import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseApiKey, verifyApiKey } from '../src/parts/auth/keys.ts';
import { buildPlan } from '../src/plan/build-plan.ts';
import type { Plan } from '../src/plan/types.ts';
import { checkFile } from '../src/spec/check.ts';
import { SqliteStore } from '../src/storage/index.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const temp = mkdtempSync(join(tmpdir(), 'ninefold-keys-'));
const spec = join(temp, 'service.yaml');
const db = join(temp, 'desk.db');

const SPEC = `
ninefold: 1
service: { name: desk }
resources:
  Ticket:
    fields:
      subject: { type: string, required: true }
auth:
  schemes: { key: { type: apiKey, in: header, name: X-Api-Key } }
  require: [key]
  roles: { agent: Support agent, admin: Staff with full access }
`;

const cli = (args: string[], env: Record<string, string> = {}) =>
  promisify(execFile)('node', [join(root, 'bin/ninefold.js'), 'keys', ...args], {
    cwd: temp,
    env: { ...process.env, NINEFOLD_DB: '', ...env },
  }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );

const lastLine = (text: string) => text.trimEnd().split('\n').pop() ?? '';

const stored = async (id: string) => {
  const store = new SqliteStore({ path: db });
  try {
    return await store.apiKeys.find(id);
  } finally {
    await store.close();
  }
};

const TICKET = { id: 't1', createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z' };

// The database the server made (serve migrates the same way): keys join it without touching its data.
let plan: Plan;
beforeAll(async () => {
  writeFileSync(spec, SPEC);
  const { spec: checked } = await checkFile(spec);
  if (!checked) throw new Error('the test spec does not check');
  plan = buildPlan(checked, temp);
  const store = new SqliteStore({ path: db });
  await store.migrate(plan);
  await store.insert('Ticket', { ...TICKET, revision: 1, subject: 'printer on fire' });
  await store.close();
});
afterAll(() => rmSync(temp, { recursive: true, force: true }));

describe('ninefold keys', () => {
  let id = '';
  let key = '';

  it('create prints a summary, then the key alone on the last line', async () => {
    const r = await cli(['create', spec, '--db', db, '--role', 'agent', '--role', 'admin', '--subject', 'staff-1']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    key = lastLine(r.stdout);
    const parsed = parseApiKey(key);
    expect(parsed).toBeDefined();
    id = parsed?.id ?? '';
    expect(r.stdout).toContain(`Created API key ${id}`);
    expect(r.stdout).toMatch(/subject: staff-1\n/);
    expect(r.stdout).toMatch(/roles: +agent, admin\n/);
    expect(r.stdout).toMatch(/expires: never\n/);
    expect(r.stdout.split(key).length).toBe(2);

    const record = await stored(id);
    expect(record).toMatchObject({ subject: 'staff-1', roles: ['agent', 'admin'] });
    expect(verifyApiKey(record, parsed?.secret ?? '', new Date())).toBe('ok');
  });

  it('leaves the records of the database alone', async () => {
    const store = new SqliteStore({ path: db });
    try {
      await store.migrate(plan);
      expect(await store.get('Ticket', 't1')).toMatchObject({ subject: 'printer on fire' });
    } finally {
      await store.close();
    }
  });

  it('create takes --expires as a duration and defaults the database to <service name>.db', async () => {
    const r = await cli(['create', spec, '--role', 'agent', '--expires', '90d']);
    expect(r.code).toBe(0);
    expect(existsSync(join(temp, 'desk.db'))).toBe(true);
    const record = await stored(parseApiKey(lastLine(r.stdout))?.id ?? '');
    const days = (Date.parse(record?.expiresAt ?? '') - Date.parse(record?.createdAt ?? '')) / 86_400_000;
    expect(days).toBe(90);
    expect(record?.subject).toBe(record?.id);
    expect(r.stdout).toContain(`expires: ${record?.expiresAt}`);
  });

  it('list shows every key, never a secret or its hash', async () => {
    const record = await stored(id);
    const text = await cli(['list', '--db', db]);
    expect(text.code).toBe(0);
    const line = text.stdout.split('\n').find((l) => l.startsWith(id)) ?? '';
    expect(line).toMatch(new RegExp(`^${id} +staff-1 +agent,admin +${record?.createdAt} +never +live$`));
    const json = await cli(['list', spec, '--format', 'json'], { NINEFOLD_DB: db });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toContainEqual({
      id,
      subject: 'staff-1',
      roles: ['agent', 'admin'],
      createdAt: record?.createdAt,
      expiresAt: null,
      revokedAt: null,
      status: 'live',
    });
    for (const out of [text.stdout, json.stdout]) {
      expect(out).not.toContain(parseApiKey(key)?.secret);
      expect(out).not.toContain(record?.secretHash);
    }
  });

  it('revoke takes effect at once; a second revoke exits 1', async () => {
    const first = await cli(['revoke', spec, id, '--db', db]);
    expect(first).toMatchObject({ code: 0, stdout: `revoked ${id}\n` });
    const record = await stored(id);
    expect(record?.revokedAt).toBeDefined();
    expect(verifyApiKey(record, parseApiKey(key)?.secret ?? '', new Date())).toBe('invalid');

    const again = await cli(['revoke', id], { NINEFOLD_DB: db });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`${id} was already revoked`);
    const unknown = await cli(['revoke', 'key_0000000000000000', '--db', db]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no key key_0000000000000000');
    expect((await cli(['list', '--db', db])).stdout).toMatch(new RegExp(`^${id} .* revoked$`, 'm'));
  });

  it('refuses a role the spec does not declare, and writes nothing', async () => {
    const before = (await cli(['list', '--db', db, '--format', 'json'])).stdout;
    const r = await cli(['create', spec, '--db', db, '--role', 'agent', '--role', 'root']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('ninefold keys create: unknown role "root"; the spec declares agent, admin\n');
    expect((await cli(['list', '--db', db, '--format', 'json'])).stdout).toBe(before);
  });

  it.each([
    ['no role', ['create', spec, '--db', db], 'give at least one --role'],
    ['a bad --expires', ['create', spec, '--db', db, '--role', 'agent', '--expires', 'soon'], '--expires must be'],
    ['no spec and no database', ['list'], 'give the spec, --db PATH or NINEFOLD_DB'],
    ['an unknown option', ['list', '--db', db, '--colour'], 'unknown option --colour; options are --format, --db'],
    ['an unknown format', ['list', '--db', db, '--format', 'xml'], '--format must be one of text, json'],
  ])('exits 2 on %s, with a message and no stack trace', async (_, args, message) => {
    const r = await cli(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('does not create a database to list or revoke in', async () => {
    const missing = join(temp, 'missing.db');
    const r = await cli(['list', '--db', missing]);
    expect(r).toMatchObject({ code: 1, stderr: `ninefold keys list: no database at ${missing}\n` });
    expect((await cli(['revoke', 'key_0000000000000000', '--db', missing])).code).toBe(1);
    expect(existsSync(missing)).toBe(false);
  });

  it('prints help for keys and for each subcommand', async () => {
    const all = await cli(['--help']);
    expect(all.code).toBe(0);
    for (const sub of ['create', 'list', 'revoke']) expect(all.stdout).toContain(`ninefold keys ${sub}`);
    const create = await cli(['create', '--help']);
    expect(create).toMatchObject({ code: 0, stderr: '' });
    expect(create.stdout).toMatch(/^Usage: ninefold keys create <spec> \[options\]/);
    expect(create.stdout).toMatch(/--role R .*may be repeated/);
    expect((await cli(['rotate'])).code).toBe(2);
  });
});
