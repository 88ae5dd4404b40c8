import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, freshDatabase, type Served, serveSpec } from './helpers/serve-spec.ts';
import { testClock } from './helpers/test-clock.ts';

/** A contact book whose `name` became `fullName` in v2; v1 is deprecated and retired on 2027-01-15. */
const spec = (versioning: string) => `
ninefold: 1
service: { name: contacts, title: Contacts, purpose: Versioned contacts. }
resources:
  Contact:
    fields:
      fullName: { type: string, required: true, maxLength: 40 }
endpoints:
  Contact: { path: /contacts, list: { filter: [fullName], sort: [fullName] } }
versioning:
${versioning}
  versions:
    - id: v1
    - id: v2
      changes: [{ resource: Contact, rename: { from: name, to: fullName } }]
  deprecated: { v1: { deprecation: "2026-09-01", sunset: "2027-01-15" } }
`;

/** Each scheme: how a request names v1, and the Vary it must answer with. */
const SCHEMES = [
  { scheme: 'scheme: header', v1: { path: '/contacts', headers: { 'api-version': 'v1' } }, vary: 'Api-Version' },
  {
    scheme: 'scheme: header\n  name: X-Version',
    v1: { path: '/contacts', headers: { 'x-version': 'v1' } },
    vary: 'X-Version',
  },
  { scheme: 'scheme: query', v1: { path: '/contacts?version=v1', headers: {} }, vary: undefined },
  { scheme: 'scheme: path', v1: { path: '/v1/contacts', headers: {} }, vary: undefined },
  {
    scheme: 'scheme: media-type',
    v1: { path: '/contacts', headers: { accept: 'application/vnd.contacts+json; version=v1' } },
    vary: 'Accept',
  },
] as const;

const clock = testClock(new Date('2026-11-26T12:00:00Z'));

describe.each(SCHEMES)('versioning $scheme', ({ scheme, v1, vary }) => {
  let served: Served;
  beforeAll(async () => {
    served = await serveSpec(spec(`  ${scheme}`), { dbPath: freshDatabase(), now: clock.now });
  });
  afterAll(() => served?.close({ remove: true }));

  it('serves v1 and v2 at once from one record, and names the version of every answer', async () => {
    const created = await call(served.url, 'POST', v1.path, { json: { name: 'Ada' }, headers: v1.headers });
    expect(created.status).toBe(201);
    expect(created.body.name).toBe('Ada');
    expect(created.body.fullName).toBeUndefined();
    expect(created.headers.get('api-version')).toBe('v1');
    if (vary) expect(created.headers.get('vary')).toContain(vary);
    else expect(created.headers.get('vary') ?? '').not.toMatch(/version|accept/i);
    const newest = await call(served.url, 'GET', `/contacts/${created.body.id}`);
    expect(newest.status).toBe(200);
    expect(newest.body.fullName).toBe('Ada');
    expect(newest.body.name).toBeUndefined();
    expect(newest.headers.get('api-version')).toBe('v2');
    expect(newest.headers.get('deprecation')).toBeNull();
    const [path, query] = v1.path.split('?');
    const old = await call(served.url, 'GET', `${path}/${created.body.id}${query ? `?${query}` : ''}`, {
      headers: v1.headers,
    });
    expect(old.body).toMatchObject({ id: created.body.id, name: 'Ada' });
    expect(old.body.fullName).toBeUndefined();
  });

  it('answers an unknown version 400 unsupported_version listing the versions, and stores nothing', async () => {
    const unknown: { path: string; headers: Record<string, string> } = {
      'scheme: header': { path: '/contacts', headers: { 'api-version': 'v9' } },
      'scheme: header\n  name: X-Version': { path: '/contacts', headers: { 'x-version': 'v9' } },
      'scheme: query': { path: '/contacts?version=v9', headers: {} },
      'scheme: path': { path: '/v9/contacts', headers: {} },
      'scheme: media-type': { path: '/contacts', headers: { accept: 'application/vnd.contacts+json; version=v9' } },
    }[scheme] as { path: string; headers: Record<string, string> };
    const before = await served.countRows('contact');
    const answer = await call(served.url, 'POST', unknown.path, { json: { fullName: 'X' }, headers: unknown.headers });
    expect(answer.status).toBe(400);
    expect(answer.headers.get('content-type')).toContain('application/problem+json');
    expect(answer.body.code).toBe('unsupported_version');
    expect(answer.body.versions).toEqual(['v1', 'v2']);
    expect(await served.countRows('contact')).toBe(before);
  });

  it('carries Deprecation, Sunset and Link on every answer in the deprecated version, errors too', async () => {
    const ok = await call(served.url, 'GET', v1.path, { headers: v1.headers });
    expect(ok.status).toBe(200);
    const failed = await call(served.url, 'POST', v1.path, { json: {}, headers: v1.headers });
    expect(failed.status).toBe(422);
    for (const answer of [ok, failed]) {
      expect(answer.headers.get('deprecation')).toBe(`@${Date.parse('2026-09-01T00:00:00Z') / 1000}`);
      expect(answer.headers.get('sunset')).toBe('Fri, 15 Jan 2027 00:00:00 GMT');
      expect(answer.headers.get('link')).toContain('rel="deprecation"');
      expect(answer.headers.get('link')).toContain('rel="sunset"');
    }
  });
});

describe('versioning defaults and sunset', () => {
  const local = testClock(new Date('2027-01-14T23:59:59Z'));
  let served: Served;
  beforeAll(async () => {
    served = await serveSpec(spec('  scheme: header\n  default: v1'), { dbPath: freshDatabase(), now: local.now });
  });
  afterAll(() => served?.close({ remove: true }));

  it('serves the declared default when a request names none', async () => {
    const created = await call(served.url, 'POST', '/contacts', { json: { name: 'Grace' } });
    expect(created.status).toBe(201);
    expect(created.headers.get('api-version')).toBe('v1');
    expect(created.body.name).toBe('Grace');
  });

  it('answers 410 version_sunset once the sunset date has come, and still serves the newest', async () => {
    expect((await call(served.url, 'GET', '/contacts', { headers: { 'api-version': 'v1' } })).status).toBe(200);
    local.advance(1000);
    const gone = await call(served.url, 'GET', '/contacts', { headers: { 'api-version': 'v1' } });
    expect(gone.status).toBe(410);
    expect(gone.body.code).toBe('version_sunset');
    expect(gone.body.versions).toEqual(['v2']);
    const fine = await call(served.url, 'GET', '/contacts', { headers: { 'api-version': 'v2' } });
    expect(fine.status).toBe(200);
    expect(fine.headers.get('api-version')).toBe('v2');
  });
});

describe('versioning without a default', () => {
  let served: Served;
  beforeAll(async () => {
    served = await serveSpec(spec('  scheme: header'), { dbPath: freshDatabase(), now: clock.now });
  });
  afterAll(() => served?.close({ remove: true }));

  it('serves the newest when a request names none', async () => {
    const answer = await call(served.url, 'GET', '/contacts');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('api-version')).toBe('v2');
    expect(answer.headers.get('deprecation')).toBeNull();
  });
});
