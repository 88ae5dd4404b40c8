import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { main } from '../src/cli/main.ts';
import { issueApiKey } from '../src/parts/auth/keys.ts';
import { call, freshDatabase, ON_POSTGRES, planOf, type Served, servePlan } from './helpers/serve-spec.ts';
import { waitFor } from './helpers/wait-for.ts';

const SPEC = `
ninefold: 1
service: { name: pinned, title: Pinned, purpose: API keys pinned to a version. }
resources:
  Contact:
    fields:
      fullName: { type: string, required: true }
auth:
  schemes: { key: { type: apiKey, in: header, name: X-Api-Key } }
  require: [key]
  roles: { admin: Staff, agent: Agent }
  rules: { Contact: { read: "true", create: "true", update: "true", delete: "true" } }
versioning:
  scheme: header
  versions:
    - id: v1
    - id: v2
      changes: [{ resource: Contact, rename: { from: name, to: fullName } }]
`;

/** Runs `ninefold keys …` in this process; the key text is the last line of its output. */
const keysCli = async (args: string[]) => {
  const out: string[] = [];
  const err: string[] = [];
  const write = vi.spyOn(process.stdout, 'write').mockImplementation((s) => out.push(String(s)) > 0);
  const werr = vi.spyOn(process.stderr, 'write').mockImplementation((s) => err.push(String(s)) > 0);
  try {
    const code = await main(['keys', ...args]);
    return { code, stdout: out.join(''), stderr: err.join('') };
  } finally {
    write.mockRestore();
    werr.mockRestore();
  }
};

describe('API keys pinned to a version', () => {
  let served: Served;
  const lines: string[] = [];
  const dbPath = freshDatabase();
  const specFile = join(mkdtempSync(join(tmpdir(), 'ninefold-pinned-')), 'service.yaml');
  let cliKey: string | undefined;
  beforeAll(async () => {
    writeFileSync(specFile, SPEC);
    if (!ON_POSTGRES) {
      const made = await keysCli(['create', specFile, '--db', dbPath, '--role', 'agent', '--api-version', 'v1']);
      expect(made.stderr).toBe('');
      expect(made.code).toBe(0);
      expect(made.stdout).toContain('version: v1');
      cliKey = made.stdout.trim().split('\n').at(-1);
      const wrong = await keysCli(['create', specFile, '--db', dbPath, '--role', 'agent', '--api-version', 'v7']);
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toContain('v1, v2');
    }
    served = await servePlan(planOf(SPEC), {
      dbPath,
      logLevel: 'info',
      logStream: { write: (line) => void lines.push(line) },
    });
  });
  afterAll(() => served?.close({ remove: true }));

  // The CLI writes to the SQLite file here; the store path is covered by the next test on both stores.
  it.skipIf(ON_POSTGRES)(
    'a key created with --api-version is served that version when a request names none',
    async () => {
      const made = await call(served.url, 'POST', '/contacts', {
        json: { name: 'Ada' },
        headers: { 'x-api-key': cliKey as string },
      });
      expect(made.status).toBe(201);
      expect(made.headers.get('api-version')).toBe('v1');
      expect(made.body.name).toBe('Ada');
    },
  );

  it('the key admin API pins a key; a request naming a version still gets that one', async () => {
    const admin = { 'x-api-key': (await issueApiKey(served.store, { subject: 'root', roles: ['admin'] })).key };
    const refused = await call(served.url, 'POST', '/_ninefold/keys', {
      json: { roles: ['agent'], apiVersion: 'v9' },
      headers: admin,
    });
    expect(refused.status).toBe(422);
    expect(refused.body.errors[0].pointer).toBe('#/apiVersion');
    const issued = await call(served.url, 'POST', '/_ninefold/keys', {
      json: { roles: ['agent'], subject: 'old-client', apiVersion: 'v1' },
      headers: admin,
    });
    expect(issued.status).toBe(201);
    expect(issued.body.apiVersion).toBe('v1');
    const pinned = { 'x-api-key': issued.body.key as string };
    const made = await call(served.url, 'POST', '/contacts', { json: { name: 'Grace' }, headers: pinned });
    expect(made.status).toBe(201);
    expect(made.headers.get('api-version')).toBe('v1');
    const asked = await call(served.url, 'GET', `/contacts/${made.body.id}`, {
      headers: { ...pinned, 'api-version': 'v2' },
    });
    expect(asked.headers.get('api-version')).toBe('v2');
    expect(asked.body.fullName).toBe('Grace');
    const unpinned = await call(served.url, 'GET', `/contacts/${made.body.id}`, { headers: admin });
    expect(unpinned.headers.get('api-version')).toBe('v2');
    const listed = await call(served.url, 'GET', '/_ninefold/keys', { headers: admin });
    const old = listed.body.data.find((k: { subject: string }) => k.subject === 'old-client');
    expect(old.apiVersion).toBe('v1');
  });

  it('logs the version and the caller of every versioned request', async () => {
    const entries = () => lines.map((l) => JSON.parse(l)).filter((e) => e.msg === 'request' && e.apiVersion);
    // The line is written once the answer has gone: wait for it rather than race it.
    await waitFor(() => entries().some((e) => e.apiVersion === 'v2' && e.caller === 'root'), 'the request lines');
    expect(entries().some((e) => e.apiVersion === 'v1' && e.caller === 'old-client')).toBe(true);
  });
});
