import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, exportSPKI, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, planOf, type Served, servePlan } from './helpers/serve-spec.ts';

// Bearer schemes verified with a JWKS file (ES256, key chosen by kid) and with an EdDSA public key (PEM).
let s: Served;
let es: Awaited<ReturnType<typeof generateKeyPair>>;
let ed: Awaited<ReturnType<typeof generateKeyPair>>;
let stranger: Awaited<ReturnType<typeof generateKeyPair>>;

const sign = (key: Parameters<SignJWT['sign']>[0], alg: string, kid?: string) =>
  new SignJWT({ roles: ['reader'] })
    .setProtectedHeader({ alg, ...(kid ? { kid } : {}) })
    .setSubject('user-1')
    .setAudience('notes')
    .setExpirationTime('5m')
    .sign(key);

beforeAll(async () => {
  es = await generateKeyPair('ES256', { extractable: true });
  ed = await generateKeyPair('EdDSA', { extractable: true });
  stranger = await generateKeyPair('ES256', { extractable: true });
  const dir = mkdtempSync(join(tmpdir(), 'ninefold-jwks-'));
  const jwk = { ...(await exportJWK(es.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
  writeFileSync(join(dir, 'jwks.json'), JSON.stringify({ keys: [jwk] }));
  writeFileSync(join(dir, 'ed.pem'), await exportSPKI(ed.publicKey));
  s = await servePlan(
    planOf(`
ninefold: 1
service: { name: jwt-keys }
resources:
  Note:
    fields: { text: { type: string, required: true } }
auth:
  schemes:
    sso: { type: bearer, format: jwt, jwks: "file:${join(dir, 'jwks.json')}", algorithms: [ES256], audience: notes }
    edge: { type: bearer, format: jwt, publicKey: "file:${join(dir, 'ed.pem')}", algorithms: [EdDSA], audience: notes }
  require: [sso, edge]
  roles: { reader: Reads notes. }
endpoints:
  Note: { operations: [list, create] }
`),
  );
});
afterAll(() => s.close({ remove: true }));

const list = (token: string) => call(s.url, 'GET', '/notes', { headers: { authorization: `Bearer ${token}` } });

describe('bearer JWTs checked against a JWKS file and a public key', () => {
  it('accepts an ES256 token whose kid is in the JWKS, and an EdDSA token signed by the PEM key', async () => {
    expect((await list(await sign(es.privateKey, 'ES256', 'k1'))).status).toBe(200);
    expect((await list(await sign(ed.privateKey, 'EdDSA'))).status).toBe(200);
  });

  it('refuses a token signed by another key, with or without a known kid', async () => {
    for (const token of [await sign(stranger.privateKey, 'ES256', 'k1'), await sign(stranger.privateKey, 'ES256')]) {
      const r = await list(token);
      expect(r.status).toBe(401);
      expect(r.body.code).toBe('invalid_token');
      expect(r.headers.get('www-authenticate')).toContain('error="invalid_token"');
    }
  });
});
