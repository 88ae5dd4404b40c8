import { readFileSync } from 'node:fs';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../src/parts/auth/keys.ts';
import { call, LEAKS, type Served, serveSpec, useHeaders } from './helpers/serve-spec.ts';

/** Error payloads the errors part declares, with remapped codes: GitHub's, Stripe's and RealWorld's. */
const fixture = (name: string) => readFileSync(`test/fixtures/errauth/${name}.yaml`, 'utf8');
const JSON_TYPE = 'application/json; charset=utf-8';

describe('GitHub’s error payload (format: github)', () => {
  let s: Served;
  const docs = (code: string) => `https://docs.example.com/rest/errors#${code}`;
  beforeAll(async () => {
    s = await serveSpec(fixture('github'));
  });
  afterAll(() => s.close({ remove: true }));

  it('answers a missing field as {message, errors: [{resource, field, code}], documentation_url}', async () => {
    const r = await call(s.url, 'POST', '/repos', { json: { description: 'x' } });
    expect(r.status).toBe(422);
    expect(r.headers.get('content-type')).toBe(JSON_TYPE);
    expect(r.body).toEqual({
      message: 'Validation Failed',
      errors: [{ resource: 'Repo', field: 'name', code: 'missing_field' }],
      documentation_url: docs('validation_failed'),
    });
    expect((await call(s.url, 'GET', '/repos')).body.data).toEqual([]);
  });

  it('answers a taken name 422 already_exists (unique_violation remapped by the preset), nothing stored', async () => {
    expect((await call(s.url, 'POST', '/repos', { json: { name: 'hello' } })).status).toBe(201);
    const r = await call(s.url, 'POST', '/repos', { json: { name: 'hello' } });
    expect(r.status).toBe(422);
    expect(r.body).toEqual({
      message: 'Validation Failed',
      errors: [{ resource: 'Repo', field: 'name', code: 'already_exists' }],
      documentation_url: docs('unique_violation'),
    });
    expect((await call(s.url, 'GET', '/repos')).body.data).toHaveLength(1);
  });

  it('answers other failures with a message and no errors member: not found, bad JSON, unknown path', async () => {
    const missing = await call(s.url, 'GET', '/repos/nope');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ message: 'Not Found', documentation_url: docs('not_found') });
    const nowhere = await call(s.url, 'GET', '/nowhere');
    expect(nowhere.status).toBe(404);
    expect(nowhere.headers.get('content-type')).toBe(JSON_TYPE);
    expect(nowhere.body).toEqual(missing.body);
    const bad = await call(s.url, 'POST', '/repos', {
      body: '{"name":',
      headers: { 'content-type': 'application/json' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ message: 'The body is not valid JSON.', documentation_url: docs('invalid_json') });
    const method = await call(s.url, 'DELETE', '/repos');
    expect(method.status).toBe(405);
    expect(method.headers.get('allow')).toBeTruthy();
    expect(Object.keys(method.body)).toEqual(['message', 'documentation_url']);
    for (const r of [missing, nowhere, bad, method]) expect(r.text).not.toMatch(LEAKS);
  });

  it('names the resource of the route a failing field belongs to', async () => {
    const r = await call(s.url, 'POST', '/issues', { json: { repo: 999 } });
    expect(r.status).toBe(422);
    expect(r.body.errors).toEqual([{ resource: 'Issue', field: 'title', code: 'missing_field' }]);
  });

  it('describes the payload in the OpenAPI document it serves, as application/json', async () => {
    const doc = (await call(s.url, 'GET', '/openapi.json')).body;
    const schema = doc.components.schemas.ErrorPayload;
    expect(schema.required).toEqual(['message']);
    expect(Object.keys(schema.properties)).toEqual(['message', 'errors', 'documentation_url']);
    expect(doc.components.schemas.Problem).toBeUndefined();
    const answer = doc.paths['/repos'].post.responses['422'];
    expect(Object.keys(answer.content)).toEqual(['application/json']);
    expect(answer.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ErrorPayload' });
    expect(doc.components.examples.unique_violation.value).toEqual({
      message: 'Validation Failed',
      errors: [{ resource: 'Example', field: 'name', code: 'missing_field' }],
      documentation_url: docs('unique_violation'),
    });
  });
});

describe('Stripe’s error payload (format: stripe)', () => {
  let s: Served;
  beforeAll(async () => {
    s = await serveSpec(fixture('stripe'));
    const { key } = await issueApiKey(s.store, { roles: [], prefix: 'sk_test_' });
    useHeaders(s.url, { authorization: `Bearer ${key}` });
  });
  afterAll(() => s.close({ remove: true }));

  it('answers {"error": {type, code, message, param}} with the param at fault', async () => {
    const r = await call(s.url, 'POST', '/v1/customers', { json: { name: 'Ann' } });
    expect(r.status).toBe(422);
    expect(r.headers.get('content-type')).toBe(JSON_TYPE);
    expect(r.body).toEqual({
      error: {
        type: 'invalid_request_error',
        code: 'validation_failed',
        message: expect.any(String),
        param: 'email',
      },
    });
  });

  it('answers a taken email with the remapped status and message', async () => {
    expect((await call(s.url, 'POST', '/v1/customers', { json: { email: 'a@example.com' } })).status).toBe(201);
    const r = await call(s.url, 'POST', '/v1/customers', { json: { email: 'a@example.com' } });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({
      error: {
        type: 'invalid_request_error',
        code: 'unique_violation',
        message: 'A customer with this email already exists.',
        param: 'email',
      },
    });
    expect((await call(s.url, 'GET', '/v1/customers')).body.data).toHaveLength(1);
  });

  it('answers a request without a key 401 authentication_error, with both challenges', async () => {
    const r = await call(s.url, 'GET', '/v1/customers', { headers: { authorization: '' } });
    expect(r.status).toBe(401);
    expect(r.headers.get('www-authenticate')).toBe('Bearer realm="billing", Basic realm="billing", charset="UTF-8"');
    expect(r.body).toEqual({
      error: { type: 'authentication_error', code: 'unauthenticated', message: 'This endpoint needs credentials.' },
    });
  });

  it('leaves param out when no field is at fault, and types idempotency errors as Stripe does', async () => {
    const missing = await call(s.url, 'GET', '/v1/customers/cus_01JD7X3K9Q2M4N6P8R0S2T4V6W');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({
      error: { type: 'invalid_request_error', code: 'not_found', message: expect.any(String) },
    });
    const headers = { 'idempotency-key': 'k-1' };
    expect((await call(s.url, 'POST', '/v1/customers', { json: { email: 'b@example.com' }, headers })).status).toBe(
      201,
    );
    const reused = await call(s.url, 'POST', '/v1/customers', { json: { email: 'c@example.com' }, headers });
    expect(reused.status).toBe(422);
    expect(reused.body.error).toMatchObject({ type: 'idempotency_error', code: 'idempotency_key_reused' });
  });
});

describe('RealWorld’s per-field payload (format: per-field)', () => {
  let s: Served;
  beforeAll(async () => {
    process.env.CONDUIT_JWT_SECRET = 'conduit-test-secret-of-32-bytes!';
    s = await serveSpec(fixture('conduit'));
    const jwt = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('ann')
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode('conduit-test-secret-of-32-bytes!'));
    useHeaders(s.url, { authorization: `Token ${jwt}` });
  });
  afterAll(() => s.close({ remove: true }));

  it('lists each failing field with its messages, worded as the spec says', async () => {
    const r = await call(s.url, 'POST', '/api/articles', { json: { article: { body: 'x' } } });
    expect(r.status).toBe(422);
    expect(r.headers.get('content-type')).toBe(JSON_TYPE);
    expect(r.body).toEqual({ errors: { slug: ["can't be blank"], title: ["can't be blank"] } });
  });

  it('answers a taken slug 422 "has already been taken" (unique_violation remapped)', async () => {
    const article = { article: { slug: 'how-to', title: 'How' } };
    expect((await call(s.url, 'POST', '/api/articles', { json: article })).status).toBe(201);
    const r = await call(s.url, 'POST', '/api/articles', { json: article });
    expect(r.status).toBe(422);
    expect(r.body).toEqual({ errors: { slug: ['has already been taken'] } });
  });

  it('files an error about no field under the field the spec names, or under body', async () => {
    const missing = await call(s.url, 'GET', '/api/articles/nope');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ errors: { article: ['not found'] } });
    const bad = await call(s.url, 'POST', '/api/articles', {
      body: '{"article":',
      headers: { 'content-type': 'application/json' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ errors: { body: ['The body is not valid JSON.'] } });
    expect(bad.text).not.toMatch(LEAKS);
    const anonymous = await call(s.url, 'POST', '/api/articles', {
      json: { article: { slug: 'x', title: 'X' } },
      headers: { authorization: '' },
    });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual({ errors: { token: ['is missing'] } });
  });
});
