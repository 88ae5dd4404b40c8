import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, freshDatabase, type JsonAnswer, type Served, serveSpec } from './helpers/serve-spec.ts';

const ROOT = resolve(import.meta.dirname, '..');

// Three versions: v2 renames name → fullName and adds email; v3 removes nickname and makes age an integer.
const SPEC = `
ninefold: 1
service: { name: people, title: People, purpose: "One record, three versions." }
resources:
  Person:
    fields:
      fullName: { type: string, required: true, maxLength: 80 }
      email: { type: string, format: email }
      age: { type: integer, min: 0 }
endpoints:
  Person: { operations: [list, get, create, update], list: { filter: [fullName], sort: [fullName] } }
auth:
  public: [docs, openapi]
  schemes: { key: { type: apiKey, in: header, name: X-Api-Key } }
  require: [key]
  roles: { admin: Staff }
  rules: { Person: { read: "true", create: "true", update: "true" } }
versioning:
  scheme: header
  versions:
    - id: v1
    - id: v2
      changes:
        - { resource: Person, rename: { from: name, to: fullName } }
        - { resource: Person, add: email }
    - id: v3
      changes:
        - { resource: Person, remove: nickname, default: "" }
        - { resource: Person, retype: { field: age, from: { type: string } } }
`;

type Schema = { properties: Record<string, { type?: unknown; default?: unknown }>; required?: string[] };
const person = (doc: { components: { schemas: Record<string, Schema> } }) => doc.components.schemas.Person as Schema;
const fields = (doc: { components: { schemas: Record<string, Schema> } }) =>
  Object.keys(person(doc).properties).filter((k) => !['id', 'createdAt', 'updatedAt'].includes(k));

let s: Served;
beforeAll(async () => {
  s = await serveSpec(SPEC, { dbPath: freshDatabase() });
});
afterAll(() => s.close({ remove: true }));

describe('one OpenAPI document per declared version', () => {
  it('GET /openapi/<version>.json shows each version’s fields as its changes name and type them', async () => {
    const [v1, v2, v3] = (await Promise.all(
      ['v1', 'v2', 'v3'].map((v) => call(s.url, 'GET', `/openapi/${v}.json`)),
    )) as [JsonAnswer, JsonAnswer, JsonAnswer];
    for (const [answer, id] of [
      [v1, 'v1'],
      [v2, 'v2'],
      [v3, 'v3'],
    ] as const) {
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toContain('application/json');
      expect(answer.body.info.version).toBe(id);
    }
    expect(fields(v1.body)).toEqual(['name', 'age', 'nickname']);
    expect(fields(v2.body)).toEqual(['fullName', 'email', 'age', 'nickname']);
    expect(fields(v3.body)).toEqual(['fullName', 'email', 'age']);
    expect(person(v1.body).properties.age?.type).toBe('string');
    expect(person(v2.body).properties.age?.type).toBe('string');
    expect(person(v3.body).properties.age?.type).toBe('integer');
    expect(person(v1.body).properties.nickname?.default).toBe('');
    expect(person(v1.body).required).toContain('name');
    // The list's filters and sorts in v1 are on `name`, as the server takes them there.
    const params = (v1.body.paths['/persons'].get.parameters as Array<{ name?: string }>).map((p) => p.name);
    expect(params).toContain('name[contains]');
    expect(params).not.toContain('fullName');
    // The newest version's document is /openapi.json's.
    expect((await call(s.url, 'GET', '/openapi.json')).body).toEqual(v3.body);
  });

  it('the version parameter names the version the document shows', async () => {
    const v1 = (await call(s.url, 'GET', '/openapi/v1.json')).body;
    const param = (v1.paths['/persons'].get.parameters as Array<{ name?: string; description?: string }>).find(
      (p) => p.name === 'Api-Version',
    );
    expect(param?.description).toContain('This document shows v1.');
  });

  it('a version the spec does not declare has no document (404)', async () => {
    expect((await call(s.url, 'GET', '/openapi/v9.json')).status).toBe(404);
  });

  it('/docs offers every version, newest first, each document also under /docs', async () => {
    const page = await fetch(`${s.url}/docs/`);
    expect(page.status).toBe(200);
    const html = await page.text();
    const urls = [...html.matchAll(/\.\/openapi\/(v\d)\.json/g)].map((m) => m[1]);
    expect([...new Set(urls)]).toEqual(['v3', 'v2', 'v1']);
    const underDocs = await call(s.url, 'GET', '/docs/openapi/v1.json');
    expect(underDocs.status).toBe(200);
    expect(underDocs.body).toEqual((await call(s.url, 'GET', '/openapi/v1.json')).body);
  });
});

const cli = (args: string[]) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
    execFile(
      process.execPath,
      [join(ROOT, 'bin/ninefold.js'), 'openapi', ...args],
      { cwd: ROOT },
      (e, stdout, stderr) => done({ code: e ? Number(e.code) : 0, stdout, stderr }),
    );
  });

describe('ninefold openapi --api-version', () => {
  it('writes the order desk as 2026-01-15 shows it: Customer.name, not fullName', async () => {
    const { code, stdout } = await cli(['examples/orders/service.yaml', '--api-version', '2026-01-15']);
    expect(code).toBe(0);
    const doc = JSON.parse(stdout);
    expect(doc.info.version).toBe('2026-01-15');
    expect(Object.keys(doc.components.schemas.Customer.properties)).toContain('name');
    expect(Object.keys(doc.components.schemas.Customer.properties)).not.toContain('fullName');
    const newest = JSON.parse((await cli(['examples/orders/service.yaml'])).stdout);
    expect(Object.keys(newest.components.schemas.Customer.properties)).toContain('fullName');
  });

  it('refuses a version the spec does not declare (exit 2, listing those it does)', async () => {
    const { code, stdout, stderr } = await cli(['examples/orders/service.yaml', '--api-version', '2020-01-01']);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain('--api-version must be a declared version: 2026-01-15, 2026-09-01 (got "2020-01-01")');
  });
});
