import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../src/parts/auth/keys.ts';
import { call, planOf, type Served, servePlan } from './helpers/serve-spec.ts';

// Revocation must reach a running server at once, also when another process revokes the key (the server
// caches key lookups only while nothing else has written to the database).
const SPEC = `
ninefold: 1
service: { name: revoke-test }
resources:
  Note:
    fields: { text: { type: string, required: true } }
auth:
  schemes: { key: { type: apiKey, in: header, name: X-Api-Key } }
  require: [key]
  roles: { writer: Writes notes. }
endpoints:
  Note: { operations: [list, get, create] }
`;

let s: Served;
beforeAll(async () => {
  s = await servePlan(planOf(SPEC));
});
afterAll(() => s.close({ remove: true }));

const list = (key: string) => call(s.url, 'GET', '/notes', { headers: { 'x-api-key': key } });

describe('a revoked key on a running server', () => {
  it('is refused on the next request when `ninefold keys revoke` runs in another process', async () => {
    const { key, record } = await issueApiKey(s.store, { roles: ['writer'] });
    expect((await list(key)).status).toBe(200);
    expect((await list(key)).status).toBe(200); // now cached
    // Not execFileSync: a process that takes seconds to start (a loaded machine) would block this one, server
    // and all, and the keep-alive connection would then be closed under the next request (ECONNRESET).
    await promisify(execFile)(process.execPath, ['bin/ninefold.js', 'keys', 'revoke', record.id, '--db', s.dbPath]);
    const refused = await list(key);
    expect(refused.status).toBe(401);
    expect(refused.body.code).toBe('invalid_credentials');
  });

  it('is refused on the next request when revoked through the admin API of the same server', async () => {
    const admin = await issueApiKey(s.store, { roles: ['admin'] });
    const made = await call(s.url, 'POST', '/_ninefold/keys', {
      json: { roles: ['writer'], subject: 'bot' },
      headers: { 'x-api-key': admin.key },
    });
    // 'admin' is not a declared role of this spec, but the key store does not check roles: the API does.
    expect(made.status).toBe(201);
    expect((await list(made.body.key)).status).toBe(200);
    const gone = await call(s.url, 'DELETE', `/_ninefold/keys/${made.body.id}`, {
      headers: { 'x-api-key': admin.key },
    });
    expect(gone.status).toBe(204);
    expect((await list(made.body.key)).status).toBe(401);
  });

  it('a key without the admin role cannot manage keys', async () => {
    const { key } = await issueApiKey(s.store, { roles: ['writer'] });
    const r = await call(s.url, 'GET', '/_ninefold/keys', { headers: { 'x-api-key': key } });
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('forbidden');
    expect(r.text).not.toContain('nfk_');
  });
});

// A revocation made while another request's transaction waits (here: hashing a password) and then fails must
// not be rolled back with that request: the admin API's revoke runs in its own transaction.
const RACE_SPEC = `
ninefold: 1
service: { name: revoke-race }
resources:
  User:
    fields:
      email: { type: string, required: true, unique: true, maxLength: 254 }
      password: { type: string, required: true, writeOnly: true, maxLength: 200 }
      roles: { type: array, maxItems: 4, items: { type: string, maxLength: 20 } }
auth:
  schemes:
    key: { type: apiKey, in: header, name: X-Api-Key }
    basic: { type: basic, users: User, usernameField: email, passwordField: password, rolesField: roles }
  require: [key]
  roles: { writer: Writes users. }
endpoints:
  User: { operations: [list, get, create] }
`;

describe('a revocation while another transaction waits and then rolls back', () => {
  let r: Served;
  beforeAll(async () => {
    r = await servePlan(planOf(RACE_SPEC));
  });
  afterAll(() => r.close({ remove: true }));

  it('holds: the revoked key is refused afterwards', async () => {
    const admin = await issueApiKey(r.store, { roles: ['admin'] });
    const victim = await issueApiKey(r.store, { roles: ['writer'] });
    const headers = { 'x-api-key': admin.key };
    const taken = { email: 'taken@example.com', password: 'pw-1', roles: ['writer'] };
    expect((await call(r.url, 'POST', '/users', { json: taken, headers })).status).toBe(201);
    expect((await call(r.url, 'GET', '/users', { headers: { 'x-api-key': victim.key } })).status).toBe(200);
    // Each of these hashes its password inside its transaction, then fails on the unique email.
    const doomed = Array.from({ length: 6 }, () => call(r.url, 'POST', '/users', { json: taken, headers }));
    await new Promise((resolve) => setTimeout(resolve, 15));
    const gone = await call(r.url, 'DELETE', `/_ninefold/keys/${victim.record.id}`, { headers });
    expect(gone.status).toBe(204);
    expect((await Promise.all(doomed)).map((d) => d.status)).toEqual([409, 409, 409, 409, 409, 409]);
    const refused = await call(r.url, 'GET', '/users', { headers: { 'x-api-key': victim.key } });
    expect(refused.status).toBe(401);
  });
});
