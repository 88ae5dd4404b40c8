import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { buildOpenApi } from '../src/emit/openapi.ts';
import { call, planOf, serveSpec } from './helpers/serve-spec.ts';

// A spec with key auth and no roles: keys are issued without any, and the documents describe them so.
const SPEC = `
ninefold: 1
service: { name: plain }
resources:
  Note:
    fields:
      text: { type: string, required: true }
auth:
  schemes: { key: { type: apiKey, in: header, name: X-Api-Key } }
  require: [key]
endpoints:
  Note: { operations: [list, create] }
`;

const root = fileURLToPath(new URL('..', import.meta.url));
const temp = mkdtempSync(join(tmpdir(), 'ninefold-noroles-'));
const spec = join(temp, 'service.yaml');
const db = join(temp, 'plain.db');
writeFileSync(spec, SPEC);
afterAll(() => rmSync(temp, { recursive: true, force: true }));

const keys = (args: string[]) =>
  promisify(execFile)('node', [join(root, 'bin/ninefold.js'), 'keys', ...args], { cwd: temp }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );

describe('keys for a spec that declares no roles', () => {
  it('keys create issues one without --role, and the server takes it', async () => {
    const made = await keys(['create', spec, '--db', db]);
    expect(made.code).toBe(0);
    const key = made.stdout.trimEnd().split('\n').pop() ?? '';
    expect(made.stdout).toContain('roles:');
    const served = await serveSpec(SPEC, { dbPath: db });
    try {
      const created = await call(served.url, 'POST', '/notes', { json: { text: 'hi' }, headers: { 'x-api-key': key } });
      expect(created.status).toBe(201);
      expect((await call(served.url, 'GET', '/notes', { headers: { 'x-api-key': 'nope' } })).status).toBe(401);
    } finally {
      await served.close();
    }
  });

  it('a role given anyway is refused, naming why', async () => {
    const r = await keys(['create', spec, '--db', db, '--role', 'admin']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('the spec declares no roles');
  });

  it('the OpenAPI document has no empty enum of roles', () => {
    const doc = buildOpenApi(planOf(SPEC)) as {
      components: { schemas: Record<string, { required?: string[]; properties: Record<string, unknown> }> };
    };
    const { ApiKey, ApiKeyCreate } = doc.components.schemas;
    expect(ApiKey?.properties.roles).toEqual({ type: 'array', maxItems: 0, items: { type: 'string' } });
    expect(ApiKeyCreate?.required).toBeUndefined();
    expect(JSON.stringify(doc)).not.toContain('"enum":[]');
  });
});
