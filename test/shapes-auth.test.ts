import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../src/parts/auth/keys.ts';
import { call, ON_POSTGRES, type Served, serveSpec } from './helpers/serve-spec.ts';

/** Credential words the auth part declares: Stripe's secret keys, RealWorld's `Token <jwt>`. */
const fixture = (name: string) => readFileSync(`test/fixtures/errauth/${name}.yaml`, 'utf8');
const basic = (user: string, password = '') => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('Stripe’s secret keys: sk_test_… as the Bearer token or the Basic user name', () => {
  let s: Served;
  let key = '';
  beforeAll(async () => {
    s = await serveSpec(fixture('stripe'));
    key = (await issueApiKey(s.store, { roles: ['admin'], prefix: 'sk_test_' })).key;
  });
  afterAll(() => s.close({ remove: true }));

  it('accepts a key with the spec’s prefix as Bearer and as the Basic user with an empty password', async () => {
    expect(key).toMatch(/^sk_test_key_[0-9a-f]{16}_/);
    const created = await call(s.url, 'POST', '/v1/customers', {
      json: { email: 'ann@example.com' },
      headers: { authorization: `Bearer ${key}` },
    });
    expect(created.status).toBe(201);
    const viaBasic = await call(s.url, 'GET', '/v1/customers', { headers: { authorization: basic(key) } });
    expect(viaBasic.status).toBe(200);
    expect(viaBasic.body.data.map((c: { email: string }) => c.email)).toEqual(['ann@example.com']);
  });

  it('refuses a key with a password, a key without the prefix, and a revoked key, nothing stored', async () => {
    const refusals = [
      basic(key, 'secret'),
      `Bearer ${key.replace('sk_test_', 'nfk_')}`,
      `Bearer ${(await issueApiKey(s.store, { roles: [] })).key}`,
      basic(`${key.slice(0, -1)}x`),
    ];
    for (const authorization of refusals) {
      const r = await call(s.url, 'POST', '/v1/customers', {
        json: { email: 'eve@example.com' },
        headers: { authorization },
      });
      expect(r.status, authorization).toBe(401);
      expect(r.body.error).toMatchObject({ type: 'authentication_error', code: 'invalid_credentials' });
    }
    const revoked = await issueApiKey(s.store, { roles: [], prefix: 'sk_test_' });
    await s.store.apiKeys.revoke(revoked.record.id, new Date());
    expect((await call(s.url, 'GET', '/v1/customers', { headers: { authorization: basic(revoked.key) } })).status).toBe(
      401,
    );
    const list = await call(s.url, 'GET', '/v1/customers', { headers: { authorization: `Bearer ${key}` } });
    expect(list.body.data).toHaveLength(1);
  });

  it('mints keys with the prefix through the key admin API', async () => {
    const minted = await call(s.url, 'POST', '/v1/_ninefold/keys', {
      json: { roles: ['admin'] },
      headers: { authorization: `Bearer ${key}` },
    });
    expect(minted.status).toBe(201);
    expect(minted.body.key).toMatch(/^sk_test_key_/);
    const r = await call(s.url, 'GET', '/v1/customers', { headers: { authorization: basic(minted.body.key) } });
    expect(r.status).toBe(200);
  });

  it.skipIf(ON_POSTGRES)('mints keys with the prefix through `ninefold keys create`', async () => {
    const specFile = join(s.dbPath, '..', 'service.yaml');
    writeFileSync(specFile, fixture('stripe'));
    const out = await promisify(execFile)(
      'node',
      ['bin/ninefold.js', 'keys', 'create', specFile, '--db', s.dbPath, '--role', 'admin'],
      { env: { ...process.env, NINEFOLD_DB: '' } },
    );
    const minted = out.stdout.trimEnd().split('\n').pop() ?? '';
    expect(minted).toMatch(/^sk_test_key_/);
    const r = await call(s.url, 'GET', '/v1/customers', { headers: { authorization: `Bearer ${minted}` } });
    expect(r.status).toBe(200);
  });

  it('documents exactly what is accepted: http bearer and http basic, the prefix in words', async () => {
    const doc = (await call(s.url, 'GET', '/openapi.json', { headers: { authorization: `Bearer ${key}` } })).body;
    expect(doc.components.securitySchemes.secretKey).toEqual({
      type: 'http',
      scheme: 'bearer',
      description:
        'Stripe-style secret key. An API key (sk_test_…) as the bearer token: `Authorization: Bearer sk_test_…`.',
    });
    expect(doc.components.securitySchemes.secretKeyBasic).toMatchObject({ type: 'http', scheme: 'basic' });
    expect(doc.components.securitySchemes.secretKeyBasic.description).toContain('empty password');
  });
});

describe('RealWorld’s `Authorization: Token <jwt>`', () => {
  let s: Served;
  const secret = new TextEncoder().encode('conduit-test-secret-of-32-bytes!');
  const token = (sub = 'ann') =>
    new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(sub).setExpirationTime('1h').sign(secret);
  beforeAll(async () => {
    process.env.CONDUIT_JWT_SECRET = 'conduit-test-secret-of-32-bytes!';
    s = await serveSpec(fixture('conduit'));
  });
  afterAll(() => s.close({ remove: true }));

  it('authenticates the token under the declared word, and only under it', async () => {
    const article = { article: { slug: 'hi', title: 'Hi' } };
    const ok = await call(s.url, 'POST', '/api/articles', {
      json: article,
      headers: { authorization: `Token ${await token()}` },
    });
    expect(ok.status).toBe(201);
    const bearer = await call(s.url, 'POST', '/api/articles', {
      json: { article: { slug: 'no', title: 'No' } },
      headers: { authorization: `Bearer ${await token()}` },
    });
    expect(bearer.status).toBe(401);
    expect(bearer.headers.get('www-authenticate')).toBe('Token realm="conduit"');
    expect(bearer.body).toEqual({ errors: { token: ['is missing'] } });
    const forged = await call(s.url, 'POST', '/api/articles', {
      json: { article: { slug: 'no', title: 'No' } },
      headers: { authorization: `Token ${(await token()).slice(0, -2)}xx` },
    });
    expect(forged.status).toBe(401);
    expect(forged.headers.get('www-authenticate')).toBe('Token realm="conduit", error="invalid_token"');
    expect(forged.body).toEqual({ errors: { token: ['is invalid'] } });
    expect((await call(s.url, 'GET', '/api/articles')).body.data.map((a: { slug: string }) => a.slug)).toEqual(['hi']);
  });

  it('signs up: the create answers the user’s view with a token, the password stored as a hash only', async () => {
    const up = await call(s.url, 'POST', '/api/users', {
      json: { user: { email: 'bob@example.com', username: 'bob', password: 'correct horse' } },
    });
    expect(up.status).toBe(201);
    expect(up.body).toEqual({ user: { email: 'bob@example.com', username: 'bob', token: expect.any(String) } });
    const [row] = (await s.store.list('User', { filters: [], sort: [], limit: 10, count: false })).rows;
    expect(String(row?.password)).toMatch(/^scrypt\$/);
    const me = await call(s.url, 'GET', '/api/user', { headers: { authorization: `Token ${up.body.user.token}` } });
    expect(me.status).toBe(200);
    expect(me.body).toEqual({ user: { email: 'bob@example.com', username: 'bob', token: expect.any(String) } });
    const taken = await call(s.url, 'POST', '/api/users', {
      json: { user: { email: 'bob@example.com', username: 'bob2', password: 'correct horse' } },
    });
    expect(taken.status).toBe(422);
    expect(taken.body).toEqual({ errors: { email: ['has already been taken'] } });
  });

  it('signs in: the right password answers the view with a token that then authenticates', async () => {
    const signIn = await call(s.url, 'POST', '/api/users/login', {
      json: { user: { email: 'bob@example.com', password: 'correct horse' } },
    });
    expect(signIn.status).toBe(200);
    expect(signIn.body).toEqual({ user: { email: 'bob@example.com', username: 'bob', token: expect.any(String) } });
    const authorization = `Token ${signIn.body.user.token}`;
    const updated = await call(s.url, 'PUT', '/api/user', {
      json: { user: { bio: 'Hi' } },
      headers: { authorization },
    });
    expect(updated.status).toBe(200);
    expect(updated.body.user).toMatchObject({ username: 'bob', bio: 'Hi', token: expect.any(String) });
    const missing = await call(s.url, 'POST', '/api/users/login', { json: { user: { email: 'bob@example.com' } } });
    expect(missing.status).toBe(422);
    expect(missing.body).toEqual({ errors: { password: ["can't be blank"] } });
  });

  it('answers a wrong password and an unknown user alike, then limits failed sign-ins', async () => {
    const wrong = await call(s.url, 'POST', '/api/users/login', {
      json: { user: { email: 'bob@example.com', password: 'wrong horse' } },
    });
    const unknown = await call(s.url, 'POST', '/api/users/login', {
      json: { user: { email: 'nobody@example.com', password: 'wrong horse' } },
    });
    for (const r of [wrong, unknown]) {
      expect(r.status).toBe(422);
      expect(r.body).toEqual({ errors: { 'email or password': ['is invalid'] } });
      expect(r.headers.get('www-authenticate')).toBeNull();
    }
    let limited: Awaited<ReturnType<typeof call>> | undefined;
    for (let i = 0; i < 12 && !limited; i++) {
      const r = await call(s.url, 'POST', '/api/users/login', {
        json: { user: { email: 'bob@example.com', password: `guess ${i}` } },
      });
      if (r.status === 429) limited = r;
      else expect(r.status).toBe(422);
    }
    expect(limited?.headers.get('retry-after')).toMatch(/^\d+$/);
    const right = await call(s.url, 'POST', '/api/users/login', {
      json: { user: { email: 'bob@example.com', password: 'correct horse' } },
    });
    expect(right.status).toBe(429);
    expect(right.text).not.toContain('token');
  });

  it('documents sign-in as public, and the token beside the view in every session answer', async () => {
    const doc = (await call(s.url, 'GET', '/openapi.json')).body;
    const signIn = doc.paths['/api/users/login'].post;
    expect(signIn.security).toEqual([]);
    expect(signIn.requestBody.content['application/json'].schema.properties.user.required).toEqual([
      'email',
      'password',
    ]);
    const answer = signIn.responses['200'].content['application/json'].schema.properties.user;
    expect(Object.keys(answer.properties)).toEqual(['email', 'username', 'bio', 'token']);
    expect(Object.keys(signIn.responses)).toEqual(expect.arrayContaining(['422', '429']));
    const me = doc.paths['/api/user'].get.responses['200'].content['application/json'].schema.properties.user;
    expect(me.required).toContain('token');
  });

  it('documents the word: an apiKey in the Authorization header, described', async () => {
    const doc = (await call(s.url, 'GET', '/openapi.json')).body;
    expect(doc.components.securitySchemes.token).toEqual({
      type: 'apiKey',
      in: 'header',
      name: 'Authorization',
      description: 'A JWT sent as `Authorization: Token <jwt>` (not Bearer).',
    });
  });
});
