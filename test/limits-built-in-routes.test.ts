import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../src/parts/auth/keys.ts';
import { routeKey } from '../src/parts/endpoints/routes.ts';
import { builtInRoutes } from '../src/parts/limits/built-in-routes.ts';
import { checkSource } from '../src/spec/check.ts';
import { parseSpecText } from '../src/spec/load.ts';
import { expectProblem } from './helpers/bad-input-spec.ts';
import { call, type Served, serveSpec } from './helpers/serve-spec.ts';

// Issue 18: the built-in API routes (event log, webhook endpoints, key admin, usage) run the one pipeline, so the
// per-route sizes and time budgets of limits reach them as they reach declared routes.
const SPEC = `
ninefold: 1
service: { name: built-in-limits }
resources:
  Item:
    fields: { name: { type: string, required: true } }
endpoints:
  Item: { operations: [list, get, create] }
events:
  auto: [Item]
auth:
  schemes: { key: { type: apiKey, in: header, name: X-Api-Key } }
  require: [key]
  roles: { clerk: Keeps items. }
limits:
  quotas: { Item.create: 1000/day }
  size:
    endpoints: { "POST /webhook-endpoints": 1kb, "POST /_ninefold/keys": 1kb }
  timeouts:
    endpoints: { "GET /events": 5s }
`;

let s: Served;
let headers: Record<string, string> = {};
let admin: Record<string, string> = {};
const lines: string[] = [];
beforeAll(async () => {
  s = await serveSpec(SPEC, { logLevel: 'debug', logStream: { write: (line) => void lines.push(line) } });
  headers = { 'x-api-key': (await issueApiKey(s.store, { roles: ['clerk'], subject: 'cleo' })).key };
  admin = { 'x-api-key': (await issueApiKey(s.store, { roles: ['admin'], subject: 'ada' })).key };
});
afterAll(() => s.close({ remove: true }));

const padded = (bytes: number) => ({ url: 'https://example.com/hook', description: 'x'.repeat(bytes) });

describe('per-route limits on built-in routes', () => {
  it('POST /webhook-endpoints with a 1kb body limit answers 413 naming the limit, and stores nothing', async () => {
    const r = await call(s.url, 'POST', '/webhook-endpoints', { json: padded(2048), headers });
    expectProblem(r, 413, 'payload_too_large');
    expect(r.body.detail).toBe('The request body is larger than 1 KiB, the limit of this endpoint.');
    const listed = await call(s.url, 'GET', '/webhook-endpoints', { headers });
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual([]);
    // A declared route keeps the default limit (1 MiB): the same body is read and judged on its content.
    expect((await call(s.url, 'POST', '/items', { json: { name: 'x'.repeat(2048) }, headers })).status).toBe(201);
  });

  it('the key admin API takes its own limit too', async () => {
    const r = await call(s.url, 'POST', '/_ninefold/keys', {
      json: { subject: 'x'.repeat(2048), roles: ['clerk'] },
      headers: admin,
    });
    expectProblem(r, 413, 'payload_too_large');
  });

  it('the built-in routes the checker knows are the ones the server registers', async () => {
    const checked = checkSource({ ...parseSpecText(SPEC, 'service.yaml'), dir: '.' });
    if (!checked.spec) throw new Error(JSON.stringify(checked.diagnostics));
    const registered = lines
      .map((line) => JSON.parse(line) as { msg?: string; method?: string; path?: string; operation?: string })
      .filter((l) => l.msg === 'route' && /^(events|webhooks|keys|usage)\./.test(l.operation ?? ''))
      .map((l) => routeKey(l.method ?? '', l.path ?? ''));
    expect(registered.length).toBeGreaterThan(10);
    const known = builtInRoutes(checked.spec).map((key) => routeKey(...(key.split(' ') as [string, string])));
    expect(new Set(known)).toEqual(new Set(registered));
  });
});

describe('ninefold check', () => {
  it('reports per-route limits on built-in routes the spec does not have (no events: no webhook endpoints, no log)', () => {
    const without = SPEC.replace('events:\n  auto: [Item]\n', '');
    const checked = checkSource({ ...parseSpecText(without, 'service.yaml'), dir: '.' });
    expect(checked.diagnostics.map((d) => [d.code, d.message])).toEqual([
      ['unknown-limit-target', '"POST /webhook-endpoints" is not a route of this service (like "POST /orders")'],
      ['unknown-limit-target', '"GET /events" is not a route of this service (like "POST /orders")'],
    ]);
  });
});
