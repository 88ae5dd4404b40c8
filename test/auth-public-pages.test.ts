import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../src/parts/auth/keys.ts';
import { call, planOf, type Served, servePlan } from './helpers/serve-spec.ts';

const spec = (pub: string) => `
ninefold: 1
service: { name: pages-test }
resources:
  Note:
    fields: { text: { type: string, required: true } }
auth:
  schemes: { key: { type: apiKey, in: header, name: X-Api-Key } }
  require: [key]
  roles: { reader: Reads. }
${pub}
`;

describe('built-in pages', () => {
  let open: Served;
  let closed: Served;
  let key: string;
  beforeAll(async () => {
    open = await servePlan(planOf(spec('')));
    closed = await servePlan(planOf(spec('  public: [health]')));
    key = (await issueApiKey(closed.store, { roles: ['reader'] })).key;
  });
  afterAll(async () => {
    await open.close({ remove: true });
    await closed.close({ remove: true });
  });

  it('are public by default, while the API needs a key', async () => {
    for (const path of ['/healthz', '/readyz', '/openapi.json', '/docs/spec', '/docs'])
      expect((await call(open.url, 'GET', path)).status, path).toBe(200);
    expect((await call(open.url, 'GET', '/notes')).status).toBe(401);
  });

  it('left out of auth.public, need the default requirement; the ones listed stay public', async () => {
    for (const path of ['/openapi.json', '/docs/spec', '/docs']) {
      const r = await call(closed.url, 'GET', path);
      expect(r.status, path).toBe(401);
      expect(r.body.code, path).toBe('unauthenticated');
      expect((await call(closed.url, 'GET', path, { headers: { 'x-api-key': key } })).status, path).toBe(200);
    }
    expect((await call(closed.url, 'GET', '/healthz')).status).toBe(200);
  });
});
