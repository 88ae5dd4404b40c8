import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { createServer as createHttpServer, Agent as HttpAgent, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import { exportJWK, generateKeyPair } from 'jose';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { issueApiKey, parseApiKey } from '../src/parts/auth/keys.ts';
import { SqliteStore } from '../src/storage/index.ts';
import {
  type Answer,
  AUDIENCE,
  AUTH_SPEC,
  BASIC_REALM,
  basic,
  bearer,
  captureLogs,
  createUser,
  dbState,
  expectOk,
  expectProblem,
  headerLines,
  hmacJwt,
  ISSUER,
  JWT_SECRET,
  keyHeader,
  missingId,
  RSA_PUBLIC_PEM,
  rawJwt,
  rowsOf,
  SERVICE,
  sameProblem,
  secretOf,
  send,
  signRsaToken,
  signToken,
  startAuthService,
  validClaims,
  type World,
} from './helpers/auth-fixture.ts';
import { ON_POSTGRES, servePlan, tempDbPath } from './helpers/serve-spec.ts';

// RELIABILITY §2.2 A1–A12: authentication attacks over real HTTP against a real SQLite file.
// Every refusal is problem+json with `status` = the HTTP status and the catalogued code, leaks nothing, and
// leaves the database exactly as it was (checked after every test unless the test says it writes).

const CHALLENGE_KEY = `ApiKey realm="${SERVICE}", in="header", name="X-Api-Key"`;
const CHALLENGE_BEARER = `Bearer realm="${SERVICE}"`;
const CHALLENGE_BEARER_INVALID = `Bearer realm="${SERVICE}", error="invalid_token"`;
const CHALLENGE_BASIC = `Basic realm="${BASIC_REALM}", charset="UTF-8"`;
const CHALLENGE_COOKIE = `ApiKey realm="${SERVICE}", in="cookie", name="nf_key"`;

let w: World;
let url: string;
let orderOfA: string;
let noteId: string;
let mark: Record<string, string[]>;
let writes = false;
/** The test writes on purpose: the after-each "nothing changed" check is skipped for it. */
const allowWrites = () => {
  writes = true;
};

beforeAll(async () => {
  w = await startAuthService();
  url = w.url;
  const o = await send(url, 'POST', '/orders', { headers: bearer(w.a.token), json: { note: 'first' } });
  expect(o.status, o.text).toBe(201);
  orderOfA = o.body.id;
  const cookieKey = await issueApiKey(w.s.store, { subject: 'cookie-user', roles: ['customer'] });
  const n = await send(url, 'POST', '/notes', { headers: { cookie: `nf_key=${cookieKey.key}` }, json: { text: 'n' } });
  expect(n.status, n.text).toBe(201);
  noteId = n.body.id;
});
afterAll(() => w.s.close({ remove: true }));
beforeEach(async () => {
  writes = false;
  mark = await dbState(w.s);
});
afterEach(async () => {
  if (!writes) expect(await dbState(w.s)).toEqual(mark);
});

const challenges = (r: Answer) => headerLines(r, 'www-authenticate');
const sorted = (xs: string[]) => [...xs].sort();
/** 401 invalid_token with the RFC 6750 challenge of the bearer scheme among the route's challenges. */
const expectInvalidToken = (r: Answer, code = 'invalid_token') => {
  expectProblem(r, 401, code);
  expect(challenges(r)).toContain(CHALLENGE_BEARER_INVALID);
};
const adminGet = (path: string) => send(url, 'GET', path, { headers: w.asAdmin });

describe('A1 no credentials on a protected route', () => {
  it('401 unauthenticated with one WWW-Authenticate line per scheme the route accepts', async () => {
    const r = await send(url, 'GET', '/orders');
    expectProblem(r, 401, 'unauthenticated');
    expect(sorted(challenges(r))).toEqual(sorted([CHALLENGE_KEY, CHALLENGE_BEARER, CHALLENGE_BASIC]));
    // Separate header lines, not one comma-joined line.
    expect(challenges(r)).toHaveLength(3);
  });

  it('the challenges follow the route: cookie key only on /notes, the RS256 bearer only on /reports', async () => {
    const notes = await send(url, 'GET', '/notes');
    expectProblem(notes, 401, 'unauthenticated');
    expect(challenges(notes)).toEqual([CHALLENGE_COOKIE]);
    const reports = await send(url, 'GET', '/reports');
    expectProblem(reports, 401, 'unauthenticated');
    expect(challenges(reports)).toEqual([CHALLENGE_BEARER]);
  });

  it.each([
    ['POST', '/orders', { note: 'x' }],
    ['GET', '/orders/{id}', undefined],
    ['PATCH', '/orders/{id}', { note: 'x' }],
    ['PUT', '/orders/{id}', { note: 'x' }],
    ['DELETE', '/orders/{id}', undefined],
    ['POST', '/orders/{id}/place', {}],
    ['POST', '/orders/{id}/pay', { paymentRef: 'p' }],
    ['GET', '/orders/{id}/history', undefined],
    ['GET', '/customers', undefined],
    ['GET', '/users', undefined],
    ['POST', '/users', { email: 'x@example.com', password: 'p', roles: ['admin'] }],
    ['GET', '/_ninefold/keys', undefined],
    ['POST', '/_ninefold/keys', { roles: ['admin'] }],
  ])('%s %s → 401 unauthenticated, nothing written', async (method, path, json) => {
    const r = await send(url, method, path.replace('{id}', orderOfA), json === undefined ? {} : { json });
    expectProblem(r, 401, 'unauthenticated');
    expect(challenges(r).length).toBeGreaterThan(0);
  });

  it('credentials are checked before the body: a broken JSON body without credentials is still 401', async () => {
    const r = await send(url, 'POST', '/orders', { body: '{"note":', headers: { 'content-type': 'application/json' } });
    expectProblem(r, 401, 'unauthenticated');
  });

  it('an existing id and a missing id give the same 401 (existence is not revealed)', async () => {
    const missing = missingId('ord');
    for (const [method, suffix] of [
      ['GET', ''],
      ['DELETE', ''],
      ['GET', '/history'],
      ['POST', '/cancel'],
    ] as const) {
      const existing = await send(url, method, `/orders/${orderOfA}${suffix}`);
      const absent = await send(url, method, `/orders/${missing}${suffix}`);
      expectProblem(existing, 401, 'unauthenticated');
      sameProblem(existing, orderOfA, absent, missing);
    }
  });
});

describe('A2 invalid, revoked, expired, foreign and mangled API keys', () => {
  it('a valid key works (the baseline for the cases below)', async () => {
    expectOk(await send(url, 'GET', '/orders', { headers: keyHeader(w.admin.key) }));
  });

  it('an unknown but well-formed key → 401 invalid_credentials', async () => {
    const fake = `nfk_key_0123456789abcdef_${'A'.repeat(43)}`;
    const r = await send(url, 'GET', '/orders', { headers: keyHeader(fake) });
    expectProblem(r, 401, 'invalid_credentials');
    expect(challenges(r)).toContain(CHALLENGE_KEY);
  });

  it('a revoked key → 401 invalid_credentials at once (store revoke and DELETE /_ninefold/keys/{id})', async () => {
    allowWrites();
    const one = await issueApiKey(w.s.store, { subject: 'temp-1', roles: ['admin'] });
    expectOk(await send(url, 'GET', '/orders', { headers: keyHeader(one.key) }));
    await w.s.store.apiKeys.revoke(one.record.id, new Date());
    expectProblem(await send(url, 'GET', '/orders', { headers: keyHeader(one.key) }), 401, 'invalid_credentials');

    const two = await issueApiKey(w.s.store, { subject: 'temp-2', roles: ['admin'] });
    expectOk(await send(url, 'GET', '/orders', { headers: keyHeader(two.key) }));
    const del = await send(url, 'DELETE', `/_ninefold/keys/${two.record.id}`, { headers: w.asAdmin });
    expect(del.status, del.text).toBe(204);
    const before = await dbState(w.s);
    const r = await send(url, 'POST', '/orders', { headers: keyHeader(two.key), json: { customer: w.a.id } });
    expectProblem(r, 401, 'invalid_credentials');
    expect(await dbState(w.s)).toEqual(before);
  });

  // A second server on the same database that hears no notification: it must find out about the revocation itself
  // before it trusts the key it remembers (SQLite's store-level case is the storage contract's).
  it.runIf(ON_POSTGRES)(
    'a key revoked through one server is refused by another on its next request, with no notification',
    async () => {
      allowWrites();
      const other = await servePlan(w.s.plan, { dbPath: w.s.dbPath });
      try {
        await (other.store.signals as { stop?: () => Promise<void> }).stop?.();
        const k = await issueApiKey(w.s.store, { subject: 'temp-deaf', roles: ['admin'] });
        for (let i = 0; i < 2; i++) expectOk(await send(other.url, 'GET', '/orders', { headers: keyHeader(k.key) }));
        const del = await send(url, 'DELETE', `/_ninefold/keys/${k.record.id}`, { headers: w.asAdmin });
        expect(del.status, del.text).toBe(204);
        const r = await send(other.url, 'GET', '/orders', { headers: keyHeader(k.key) });
        expectProblem(r, 401, 'invalid_credentials');
      } finally {
        await other.close();
      }
    },
  );

  it('an expired key → 401 invalid_credentials', async () => {
    allowWrites();
    const expired = await issueApiKey(w.s.store, { subject: 'temp-3', roles: ['admin'], expiresInMs: -60_000 });
    const before = await dbState(w.s);
    expectProblem(await send(url, 'GET', '/orders', { headers: keyHeader(expired.key) }), 401, 'invalid_credentials');
    expectProblem(
      await send(url, 'POST', '/orders', { headers: keyHeader(expired.key), json: { customer: w.a.id } }),
      401,
      'invalid_credentials',
    );
    expect(await dbState(w.s)).toEqual(before);
  });

  it('a key issued by another environment (another database) → 401 invalid_credentials', async () => {
    const other = new SqliteStore({ path: tempDbPath() });
    try {
      await other.migrate(w.s.plan, { allowDataLoss: false });
      const foreign = await issueApiKey(other, { subject: 'staff-admin', roles: ['admin'] });
      const r = await send(url, 'GET', '/orders', { headers: keyHeader(foreign.key) });
      expectProblem(r, 401, 'invalid_credentials');
    } finally {
      await other.close();
    }
  });

  it('the secret these tests cut from a key is the whole secret, for 2,000 issued keys (many hold `_`)', async () => {
    const dbPath = tempDbPath();
    const store = new SqliteStore({ path: dbPath });
    try {
      await store.migrate(w.s.plan, { allowDataLoss: false });
      const issued: Array<Awaited<ReturnType<typeof issueApiKey>>> = [];
      for (let i = 0; i < 2000; i++) issued.push(await issueApiKey(store, { roles: ['support'] }));
      const wrong: string[] = [];
      let cutShortByLastUnderscore = 0;
      let cutToTwoCharsOrLess = 0;
      for (const [i, { key, record }] of issued.entries()) {
        const secret = secretOf(key, record.id);
        if (createHash('sha256').update(secret).digest('hex') !== record.secretHash) wrong.push(`${key}: ${secret}`);
        // "id of one key, secret of another" is a well-formed key of the other id, not a malformed text.
        const next = (issued[(i + 1) % issued.length] as (typeof issued)[number]).record.id;
        const swapped = parseApiKey(`nfk_${next}_${secret}`);
        if (swapped?.id !== next || swapped.secret !== secret) wrong.push(`swapped ${key}`);
        const afterLast = key.slice(key.lastIndexOf('_') + 1);
        if (afterLast !== secret) cutShortByLastUnderscore++;
        if (afterLast.length <= 2) cutToTwoCharsOrLess++;
      }
      expect(wrong).toEqual([]);
      // The sample holds the keys the old split on the last `_` cut short (about one in two), among them those
      // it cut to one or two characters (about one in 32), which any database dump contains: the ~3 % failures.
      expect(cutShortByLastUnderscore).toBeGreaterThan(0);
      expect(cutToTwoCharsOrLess).toBeGreaterThan(0);
    } finally {
      await store.close();
      rmSync(dirname(dbPath), { recursive: true, force: true });
    }
  });

  it('mangled keys: case, inner whitespace, truncation, extension, parts swapped → 401 invalid_credentials', async () => {
    allowWrites();
    const key = w.admin.key;
    const issued = await issueApiKey(w.s.store, { subject: 'temp-4', roles: ['support'] });
    const other = issued.key;
    const idHex = w.admin.id.slice('key_'.length);
    const secret = secretOf(key, w.admin.id);
    const flip = (c: string) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase());
    const firstLetter = key.search(/[A-Za-z]/u);
    const lastLetter = key.length - 1 - [...key].reverse().findIndex((c) => /[A-Za-z]/u.test(c));
    const variants: Record<string, string> = {
      upper: key.toUpperCase(),
      lower: key.toLowerCase(),
      'one char of the prefix flipped':
        key.slice(0, firstLetter) + flip(key[firstLetter] ?? '') + key.slice(firstLetter + 1),
      'one char of the secret flipped':
        key.slice(0, lastLetter) + flip(key[lastLetter] ?? '') + key.slice(lastLetter + 1),
      'space inside': `${key.slice(0, 20)} ${key.slice(20)}`,
      'tab inside': `${key.slice(0, 20)}\t${key.slice(20)}`,
      'last char dropped': key.slice(0, -1),
      'half the secret': key.slice(0, key.length - 20),
      'prefix only': `nfk_key_${idHex}_`,
      'id only': `key_${idHex}`,
      'secret only': secret,
      'one more char': `${key}A`,
      'key then junk': `${key} junk`,
      'id of one key, secret of another': `nfk_${issued.record.id}_${secret}`,
      'two keys in one header': `${key}, ${other}`,
    };
    for (const [name, variant] of Object.entries(variants)) {
      const r = await send(url, 'GET', '/orders', { headers: keyHeader(variant) });
      expect(r.status, name).toBe(401);
      expectProblem(r, 401, 'invalid_credentials');
    }
  });

  it('whitespace around a header value is not part of it (RFC 9110 §5.5): the same key, 200', async () => {
    expectOk(await send(url, 'GET', '/orders', { headers: keyHeader(`  ${w.admin.key}\t`) }));
  });

  it('a 10 KB key → 401 invalid_credentials, quickly', async () => {
    const r = await send(url, 'GET', '/orders', { headers: keyHeader(`nfk_key_${'a'.repeat(10 * 1024)}`) });
    expectProblem(r, 401, 'invalid_credentials');
    expect(r.cpuMs).toBeLessThan(1000);
  });

  it('the key is stored only as a hash: the key text and its secret are nowhere in the database', async () => {
    const secret = secretOf(w.admin.key, w.admin.id);
    const all = JSON.stringify(await dbState(w.s));
    expect(all).not.toContain(w.admin.key);
    expect(all).not.toContain(secret);
  });

  it('no credential reaches the log: header, query string, cookie, bearer token, basic password', async () => {
    const logged = await startAuthService({ logLevel: 'debug' });
    try {
      const lines = captureLogs(logged.s);
      await createUser(logged, 'log@example.com', 'hunter2-secret-pw', ['customer']);
      const key = logged.admin.key;
      const secret = secretOf(key, logged.admin.id);
      const wrongPassword = 'wrong-secret-pw-123';
      const calls: Array<[string, string, Record<string, string>]> = [
        ['GET', '/orders', keyHeader(key)],
        ['GET', `/orders?x-api-key=${key}&api_key=${key}&token=${logged.a.token}`, {}],
        ['GET', `/orders?x-api-key=${key}`, keyHeader(key)],
        ['GET', '/orders', { cookie: `nf_key=${key}; X-Api-Key=${key}` }],
        ['GET', '/orders', bearer(logged.a.token)],
        ['GET', '/orders', bearer(`${logged.a.token}x`)],
        ['GET', '/orders', basic('log@example.com', 'hunter2-secret-pw')],
        ['GET', '/orders', basic('log@example.com', wrongPassword)],
        ['GET', '/notes', { cookie: `nf_key=${key}` }],
        ['GET', `/orders/${missingId('ord')}?x-api-key=${key}`, keyHeader(key)],
      ];
      for (const [method, path, headers] of calls) await send(logged.url, method, path, { headers });
      const text = lines.join('');
      expect(lines.length).toBeGreaterThanOrEqual(calls.length);
      for (const secretText of [
        key,
        secret,
        logged.a.token,
        logged.a.token.split('.')[2] as string,
        'hunter2-secret-pw',
        wrongPassword,
        Buffer.from('log@example.com:hunter2-secret-pw').toString('base64'),
      ])
        expect(text).not.toContain(secretText);
    } finally {
      await logged.s.close({ remove: true });
    }
  });
});

describe('A3 a key in a place the spec does not declare is ignored', () => {
  it.each([
    ['?X-Api-Key=', (k: string) => ({ path: `/orders?X-Api-Key=${k}` })],
    ['?x-api-key=', (k: string) => ({ path: `/orders?x-api-key=${k}` })],
    ['?api_key=', (k: string) => ({ path: `/orders?api_key=${k}` })],
    ['?apiKey=', (k: string) => ({ path: `/orders?apiKey=${k}` })],
    ['cookie X-Api-Key', (k: string) => ({ headers: { cookie: `X-Api-Key=${k}` } })],
    ['cookie nf_key (declared, but not for /orders)', (k: string) => ({ headers: { cookie: `nf_key=${k}` } })],
    ['Authorization: ApiKey', (k: string) => ({ headers: { authorization: `ApiKey ${k}` } })],
    ['Authorization: <key>', (k: string) => ({ headers: { authorization: k } })],
    ['header Api-Key', (k: string) => ({ headers: { 'api-key': k } })],
    ['header X-Api-Key-2', (k: string) => ({ headers: { 'x-api-key-2': k } })],
  ])('key in %s → 401 unauthenticated with the challenges', async (_where, place) => {
    const p = place(w.admin.key);
    const r = await send(url, 'GET', 'path' in p ? (p.path as string) : '/orders', {
      headers: 'headers' in p ? (p.headers as Record<string, string>) : {},
    });
    expectProblem(r, 401, 'unauthenticated');
    expect(sorted(challenges(r))).toEqual(sorted([CHALLENGE_KEY, CHALLENGE_BEARER, CHALLENGE_BASIC]));
  });

  it('a key in the query string cannot write either', async () => {
    const r = await send(url, 'POST', `/orders?X-Api-Key=${w.admin.key}`, { json: { customer: w.a.id } });
    expectProblem(r, 401, 'unauthenticated');
  });

  it('an API key sent as a bearer token is not a JWT → 401 invalid_token', async () => {
    expectInvalidToken(await send(url, 'GET', '/orders', { headers: bearer(w.admin.key) }));
  });

  it('header names are case-insensitive: X-API-KEY is the declared header → 200', async () => {
    expectOk(await send(url, 'GET', '/orders', { headers: { 'X-API-KEY': w.admin.key } }));
  });

  it('the cookie scheme takes only the cookie: the key in X-Api-Key on /notes → 401; in nf_key → 200', async () => {
    const header = await send(url, 'GET', '/notes', { headers: keyHeader(w.admin.key) });
    expectProblem(header, 401, 'unauthenticated');
    expect(challenges(header)).toEqual([CHALLENGE_COOKIE]);
    expectProblem(await send(url, 'GET', `/notes?nf_key=${w.admin.key}`), 401, 'unauthenticated');
    expectOk(await send(url, 'GET', '/notes', { headers: { cookie: `nf_key=${w.admin.key}` } }));
  });

  it('/reports takes only the RS256 scheme: an API key is ignored, an HS256 token is invalid', async () => {
    expectProblem(await send(url, 'GET', '/reports', { headers: w.asAdmin }), 401, 'unauthenticated');
    const hs = await signToken({ sub: 'x', aud: 'authdesk-reports', roles: ['admin'] });
    const r = await send(url, 'GET', '/reports', { headers: bearer(hs) });
    expectProblem(r, 401, 'invalid_token');
    expect(challenges(r)).toEqual([CHALLENGE_BEARER_INVALID]);
  });
});

describe('A4 two credentials that disagree', () => {
  it('admin key + customer token (two subjects) → 400 ambiguous_credentials, nothing written', async () => {
    const headers = { ...keyHeader(w.admin.key), ...bearer(w.a.token) };
    expectProblem(await send(url, 'GET', '/orders', { headers }), 400, 'ambiguous_credentials');
    expectProblem(
      await send(url, 'POST', '/orders', { headers, json: { customer: w.b.id } }),
      400,
      'ambiguous_credentials',
    );
    expectProblem(await send(url, 'DELETE', `/orders/${orderOfA}`, { headers }), 400, 'ambiguous_credentials');
  });

  it('a valid key + a broken token → 400 ambiguous_credentials (every credential must hold)', async () => {
    const headers = { ...keyHeader(w.admin.key), ...bearer(`${w.a.token}x`) };
    expectProblem(await send(url, 'DELETE', `/orders/${orderOfA}`, { headers }), 400, 'ambiguous_credentials');
  });

  it('a valid key + a basic login of another subject → 400 ambiguous_credentials', async () => {
    allowWrites();
    await createUser(w, 'a4@example.com', 'a4-password', ['customer']);
    const before = await dbState(w.s);
    const headers = { ...keyHeader(w.admin.key), ...basic('a4@example.com', 'a4-password') };
    expectProblem(await send(url, 'DELETE', `/orders/${orderOfA}`, { headers }), 400, 'ambiguous_credentials');
    expect(await dbState(w.s)).toEqual(before);
  });

  it('a key and a token that name the same subject are accepted as that subject', async () => {
    allowWrites();
    const own = await issueApiKey(w.s.store, { subject: w.a.id, roles: ['customer'] });
    const r = await send(url, 'GET', '/orders', { headers: { ...keyHeader(own.key), ...bearer(w.a.token) } });
    expectOk(r);
    expect(r.body.data.length).toBeGreaterThan(0);
    for (const o of r.body.data) expect(o.customer).toBe(w.a.id);
  });

  it('a valid header key + a query key of another caller: the query key is ignored (not declared there)', async () => {
    allowWrites();
    const own = await issueApiKey(w.s.store, { subject: w.a.id, roles: ['customer'] });
    // An item GET: on a list, an unknown query parameter is a filter (400 invalid_filter) whatever it holds.
    const mine = await send(url, 'GET', `/customers/${w.a.id}?x-api-key=${w.admin.key}`, {
      headers: keyHeader(own.key),
    });
    expectOk(mine);
    expect(mine.body.id).toBe(w.a.id);
    expect(mine.body).not.toHaveProperty('creditLimit');
    const theirs = await send(url, 'GET', `/customers/${w.b.id}?x-api-key=${w.admin.key}`, {
      headers: keyHeader(own.key),
    });
    expectProblem(theirs, 404, 'not_found');
  });

  it('two X-Api-Key lines (customer, admin) → never the admin: 400 ambiguous_credentials or 401', async () => {
    allowWrites();
    const own = await issueApiKey(w.s.store, { subject: w.a.id, roles: ['customer'] });
    const before = await dbState(w.s);
    const r = await send(url, 'DELETE', `/orders/${orderOfA}`, { headers: { 'x-api-key': [own.key, w.admin.key] } });
    expect([400, 401], r.text).toContain(r.status);
    expectProblem(r, r.status, r.status === 400 ? 'ambiguous_credentials' : 'invalid_credentials');
    expect(await dbState(w.s)).toEqual(before);
  });

  it('two Authorization lines (Bearer customer, Basic admin) → 400 ambiguous_credentials or 401, never 2xx', async () => {
    allowWrites();
    await createUser(w, 'a4-admin@example.com', 'a4-admin-password', ['admin']);
    const adminBasic = basic('a4-admin@example.com', 'a4-admin-password').authorization;
    const seen: string[] = [];
    for (const lines of [
      [`Bearer ${w.a.token}`, adminBasic],
      [adminBasic, `Bearer ${w.a.token}`],
    ]) {
      const order = await send(url, 'POST', '/orders', { headers: bearer(w.a.token), json: { note: 'a4' } });
      expectOk(order, 201);
      const before = await dbState(w.s);
      const first = lines[0]?.split(' ')[0];
      const keys = await send(url, 'GET', '/_ninefold/keys', { headers: { authorization: lines } });
      const del = await send(url, 'DELETE', `/orders/${order.body.id}`, { headers: { authorization: lines } });
      seen.push(`${first} first: GET /_ninefold/keys ${keys.status} ${keys.body?.code ?? ''}`);
      seen.push(`${first} first: DELETE /orders/{id} ${del.status} ${del.body?.code ?? ''}`);
      if (del.status >= 400) expect(await dbState(w.s)).toEqual(before);
    }
    expect(seen.filter((line) => !/ (400 ambiguous_credentials|401 \w+)$/.test(line))).toEqual([]);
  });
});

describe('A5 unsigned JWTs', () => {
  it('a correctly signed token works (the baseline)', async () => {
    expectOk(await send(url, 'GET', '/orders', { headers: bearer(w.a.token) }));
  });

  it.each(['none', 'None', 'NONE', 'nOnE'])('alg "%s" with an empty signature → 401 invalid_token', async (alg) => {
    const token = rawJwt({ alg, typ: 'JWT' }, validClaims(w.a.id, { roles: ['admin'] }));
    expectInvalidToken(await send(url, 'GET', '/orders', { headers: bearer(token) }));
    expectInvalidToken(await send(url, 'POST', '/orders', { headers: bearer(token), json: { customer: w.a.id } }));
  });

  it('alg none with the signature of a valid token glued on → 401 invalid_token', async () => {
    const signature = w.a.token.split('.')[2] ?? '';
    const token = rawJwt({ alg: 'none', typ: 'JWT' }, validClaims(w.a.id), signature);
    expectInvalidToken(await send(url, 'GET', '/orders', { headers: bearer(token) }));
  });

  it('alg HS256 with the signature removed → 401 invalid_token', async () => {
    const [h, p] = w.a.token.split('.');
    expectInvalidToken(await send(url, 'GET', '/orders', { headers: bearer(`${h}.${p}.`) }));
  });

  it("B's payload with A's signature → 401 invalid_token", async () => {
    const [, payload] = w.b.token.split('.');
    const [header, , signature] = w.a.token.split('.');
    expectInvalidToken(await send(url, 'GET', '/orders', { headers: bearer(`${header}.${payload}.${signature}`) }));
  });

  it('a token signed with another secret → 401 invalid_token, nothing written', async () => {
    const token = await signToken({ sub: w.a.id, roles: ['admin'] }, { secret: 'not-the-secret-of-this-service' });
    expectInvalidToken(await send(url, 'DELETE', `/orders/${orderOfA}`, { headers: bearer(token) }));
  });
});

describe('A6 algorithm confusion and key-selection tricks', () => {
  let attacker: Server;
  let attackerUrl = '';
  let hits = 0;
  let evil: Awaited<ReturnType<typeof generateKeyPair>>;

  beforeAll(async () => {
    evil = await generateKeyPair('RS256', { extractable: true });
    const jwk = { ...(await exportJWK(evil.publicKey)), kid: 'evil', alg: 'RS256', use: 'sig' };
    attacker = createHttpServer((_req, res) => {
      hits++;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    attackerUrl = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => attacker.close(() => resolve())));
  beforeEach(() => {
    hits = 0;
  });

  it('a token signed with the real RS256 key works on /reports (the baseline)', async () => {
    expectOk(await send(url, 'GET', '/reports', { headers: bearer(await signRsaToken({ sub: 'reporter' })) }));
  });

  it('HS256 signed with the RS256 public key (PEM) as the HMAC secret → 401 invalid_token', async () => {
    const claims = { ...validClaims('reporter'), aud: 'authdesk-reports', roles: ['admin'] };
    for (const secret of [RSA_PUBLIC_PEM, RSA_PUBLIC_PEM.trim(), `${RSA_PUBLIC_PEM.trim()}\n`]) {
      const token = hmacJwt({ alg: 'HS256', typ: 'JWT' }, claims, secret);
      const r = await send(url, 'GET', '/reports', { headers: bearer(token) });
      expectProblem(r, 401, 'invalid_token');
      expect(challenges(r)).toEqual([CHALLENGE_BEARER_INVALID]);
      expectProblem(
        await send(url, 'POST', '/reports', { headers: bearer(token), json: { title: 'x' } }),
        401,
        'invalid_token',
      );
    }
  });

  it('RS512 / PS256 tokens made with the right key are refused: algorithms are pinned to RS256', async () => {
    for (const alg of ['RS512', 'PS256']) {
      const token = await signRsaToken({ sub: 'reporter' }, { alg });
      expectProblem(await send(url, 'GET', '/reports', { headers: bearer(token) }), 401, 'invalid_token');
    }
  });

  it('a valid RS256 token of /reports is refused on /orders (HS256 only) → 401 invalid_token', async () => {
    const token = await signRsaToken({ sub: w.a.id, aud: AUDIENCE, roles: ['admin'] });
    expectInvalidToken(await send(url, 'GET', '/orders', { headers: bearer(token) }));
  });

  it('jku / x5u / embedded jwk pointing at the attacker → 401 invalid_token, and nothing is fetched', async () => {
    const claims = { sub: 'reporter', roles: ['admin'] };
    const headers = [
      { jku: `${attackerUrl}/jwks.json`, kid: 'evil' },
      { x5u: `${attackerUrl}/cert.pem`, kid: 'evil' },
      { jwk: await exportJWK(evil.publicKey) },
      { jku: `${attackerUrl}/jwks.json`, jwk: await exportJWK(evil.publicKey), kid: 'evil' },
    ];
    for (const header of headers) {
      const token = await signRsaToken(claims, { key: evil.privateKey, header });
      const r = await send(url, 'GET', '/reports', { headers: bearer(token) });
      expectProblem(r, 401, 'invalid_token');
      // The same header tricks on the HS256 scheme.
      const hs = hmacJwt({ alg: 'HS256', typ: 'JWT', ...header }, validClaims(w.a.id), 'attacker-secret');
      expectInvalidToken(await send(url, 'GET', '/orders', { headers: bearer(hs) }));
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(hits).toBe(0);
  });

  it('kid path and injection tricks (../../dev/null, empty secret, SQL) → 401 invalid_token', async () => {
    for (const kid of ['../../../../../../dev/null', '/dev/null', "x' OR '1'='1", '../../etc/passwd', '']) {
      for (const secret of ['', '\n', 'x']) {
        const token = hmacJwt({ alg: 'HS256', typ: 'JWT', kid }, validClaims(w.a.id, { roles: ['admin'] }), secret);
        expectInvalidToken(await send(url, 'GET', '/orders', { headers: bearer(token) }));
      }
      const rs = await signRsaToken({ sub: 'reporter' }, { key: evil.privateKey, header: { kid } });
      expectProblem(await send(url, 'GET', '/reports', { headers: bearer(rs) }), 401, 'invalid_token');
    }
  });
});

describe('A7 expiry and not-before', () => {
  const now = () => Math.floor(Date.now() / 1000);

  it('exp 2 minutes ago (beyond the 60 s leeway) → 401 token_expired with the invalid_token challenge', async () => {
    const token = await signToken({ sub: w.a.id, exp: now() - 120, iat: now() - 600 });
    const r = await send(url, 'GET', '/orders', { headers: bearer(token) });
    expectInvalidToken(r, 'token_expired');
    expectProblem(
      await send(url, 'POST', '/orders', { headers: bearer(token), json: { note: 'late' } }),
      401,
      'token_expired',
    );
  });

  it('exp 30 s ago is inside the leeway → 200', async () => {
    const token = await signToken({ sub: w.a.id, exp: now() - 30, iat: now() - 600 });
    expectOk(await send(url, 'GET', '/orders', { headers: bearer(token) }));
  });

  it('nbf 10 minutes ahead → 401 invalid_token', async () => {
    const token = await signToken({ sub: w.a.id, nbf: now() + 600 });
    expectInvalidToken(await send(url, 'GET', '/orders', { headers: bearer(token) }));
  });

  it('no exp → 401 invalid_token', async () => {
    const token = await signToken({ sub: w.a.id, exp: undefined });
    expectInvalidToken(await send(url, 'GET', '/orders', { headers: bearer(token) }));
  });

  it.each([
    ['"tomorrow"', 'tomorrow'],
    ['a numeric string', String(Math.floor(Date.now() / 1000) + 600)],
    ['null', null],
    ['an object', { at: 1 }],
  ])('exp as %s → 401 invalid_token', async (_name, exp) => {
    const token = hmacJwt({ alg: 'HS256', typ: 'JWT' }, validClaims(w.a.id, { exp }));
    expectInvalidToken(await send(url, 'GET', '/orders', { headers: bearer(token) }));
  });
});

describe('A8 audience and issuer', () => {
  it.each([
    ['another audience', { aud: 'billing-service' }],
    ['an audience list without this service', { aud: ['billing-service', 'crm'] }],
    ['another issuer', { iss: 'https://evil.example/' }],
    ['an issuer that only starts like ours', { iss: `${ISSUER}evil` }],
    ['no aud', { aud: undefined }],
    ['no iss', { iss: undefined }],
  ])('%s → 401 invalid_audience', async (_name, claims) => {
    const token = await signToken({ sub: w.a.id, ...claims });
    const r = await send(url, 'GET', '/orders', { headers: bearer(token) });
    expectInvalidToken(r, 'invalid_audience');
    expectProblem(
      await send(url, 'POST', '/orders', { headers: bearer(token), json: { note: 'x' } }),
      401,
      'invalid_audience',
    );
  });

  it('an audience list that includes this service → 200 (RFC 7519 §4.1.3)', async () => {
    const token = await signToken({ sub: w.a.id, aud: ['crm', AUDIENCE] });
    expectOk(await send(url, 'GET', '/orders', { headers: bearer(token) }));
  });

  it('a token for another service, signed with its own secret → 401 (invalid_token)', async () => {
    const token = await signToken({ sub: w.a.id, aud: 'crm' }, { secret: 'crm-secret' });
    expectInvalidToken(await send(url, 'GET', '/orders', { headers: bearer(token) }));
  });
});

describe('A9 malformed JWTs are refused quickly', () => {
  const signedBy = (payload: string) => hmacJwt({ alg: 'HS256', typ: 'JWT' }, payload);
  const cases: Array<[string, () => string]> = [
    ['one part', () => 'abc'],
    ['two parts', () => w.a.token.split('.').slice(0, 2).join('.')],
    ['four parts', () => `${w.a.token}.abc`],
    ['bad base64 characters', () => '!!!.@@@.###'],
    ['padding in the parts', () => w.a.token.replace('.', '==.')],
    [
      'a header that is not JSON',
      () => `${Buffer.from('not json').toString('base64url')}.${w.a.token.split('.')[1]}.x`,
    ],
    ['claims that are not JSON (validly signed)', () => signedBy('not json')],
    ['claims that are an array (validly signed)', () => signedBy(JSON.stringify([validClaims('x')]))],
    ['claims that are a number (validly signed)', () => signedBy('42')],
    ['claims that are null (validly signed)', () => signedBy('null')],
    ['claims that are a string (validly signed)', () => signedBy('"sub"')],
    ['sub that is a number (validly signed)', () => signedBy(JSON.stringify(validClaims('x', { sub: 42 })))],
    ['sub that is empty (validly signed)', () => signedBy(JSON.stringify(validClaims('')))],
    [
      'roles that are an object (validly signed)',
      () => signedBy(JSON.stringify(validClaims('x', { roles: { admin: true } }))),
    ],
    ['roles that are a number (validly signed)', () => signedBy(JSON.stringify(validClaims('x', { roles: 7 })))],
    ['a 9 KB token (over 8 KB)', () => signedBy(JSON.stringify(validClaims(w.a.id, { pad: 'x'.repeat(9 * 1024) })))],
    ['an empty token', () => ''],
  ];

  it.each(cases)('%s → 401 invalid_token in under a second of work', async (_name, make) => {
    const r = await send(url, 'GET', '/orders', { headers: bearer(make()) });
    expectInvalidToken(r);
    expect(r.cpuMs).toBeLessThan(1000);
  });

  it('a 100 KB token → refused quickly (401, or 431 from the HTTP parser), never 5xx', async () => {
    const big = `${'a'.repeat(50_000)}.${'b'.repeat(50_000)}.${'c'.repeat(1000)}`;
    // Node closes the connection after a 431: keep it out of the shared keep-alive pool.
    const r = await send(url, 'GET', '/orders', { headers: bearer(big), agent: false });
    expect([401, 431], r.text.slice(0, 200)).toContain(r.status);
    if (r.status === 401) expectInvalidToken(r);
    expect(r.cpuMs).toBeLessThan(1000);
  });

  it('__proto__ / constructor claims do not smuggle roles in', async () => {
    const payload = `{"iss":${JSON.stringify(ISSUER)},"aud":"${AUDIENCE}","sub":"${w.a.id}","exp":${
      Math.floor(Date.now() / 1000) + 600
    },"__proto__":{"roles":["admin"]},"constructor":{"prototype":{"roles":["admin"]}}}`;
    const token = signedBy(payload);
    // DELETE /customers/{id} needs the admin role (operation override); B's order needs a staff role to read.
    const del = await send(url, 'DELETE', `/customers/${w.b.id}`, { headers: bearer(token) });
    expect(del.status, del.text).not.toBe(204);
    expect([401, 403]).toContain(del.status);
    expectProblem(del, del.status, del.status === 401 ? 'invalid_token' : 'forbidden');
    const orderOfB = await send(url, 'POST', '/orders', { headers: bearer(w.b.token), json: { note: 'b' } });
    allowWrites();
    expectOk(orderOfB, 201);
    const read = await send(url, 'GET', `/orders/${orderOfB.body.id}`, { headers: bearer(token) });
    expect([401, 404]).toContain(read.status);
    expect(({} as Record<string, unknown>).roles).toBeUndefined();
  });

  it('JWT_SECRET itself is not echoed anywhere in a refusal', async () => {
    const r = await send(url, 'GET', '/orders', { headers: bearer('a.b.c') });
    expect(r.text).not.toContain(JWT_SECRET);
  });
});

describe('A10 basic auth: syntax, user enumeration', () => {
  // Every test uses its own client address, so the failed-login limiter of one test never blocks another.
  const from = (n: number) => `127.0.0.${n}`;
  beforeAll(async () => {
    await createUser(w, 'ada.basic@example.com', 'correct horse battery', ['customer']);
    await createUser(w, 'uni@example.com', 'pässwörd-✓-密码', ['customer']);
    await createUser(w, 'enum@example.com', 'enum-password', ['customer']);
  });

  it('the right password → 200 (the baseline); a non-ASCII password works as UTF-8', async () => {
    expectOk(await send(url, 'GET', '/orders', { headers: basic('ada.basic@example.com', 'correct horse battery') }));
    expectOk(
      await send(url, 'GET', '/orders', {
        headers: basic('uni@example.com', 'pässwörd-✓-密码'),
        localAddress: from(11),
      }),
    );
  });

  it.each([
    ['bad base64', 'Basic !!!not-base64!!!'],
    [
      'base64 with a space inside',
      `Basic ${Buffer.from('ada.basic@example.com:x')
        .toString('base64')
        .replace(/(.{4})/, '$1 ')}`,
    ],
    ['no colon', `Basic ${Buffer.from('ada.basic@example.com').toString('base64')}`],
    ['empty password', `Basic ${Buffer.from('ada.basic@example.com:').toString('base64')}`],
    ['empty user name', `Basic ${Buffer.from(':correct horse battery').toString('base64')}`],
    ['nothing after Basic', 'Basic'],
    ['only a colon', `Basic ${Buffer.from(':').toString('base64')}`],
    ['a 5 KB credential', `Basic ${'QUFB'.repeat(1300)}`],
  ])('%s → 401 invalid_credentials', async (_name, authorization) => {
    const r = await send(url, 'GET', '/orders', { headers: { authorization }, localAddress: from(12) });
    expectProblem(r, 401, 'invalid_credentials');
    expect(challenges(r)).toContain(CHALLENGE_BASIC);
  });

  it('a wrong non-ASCII password, and the right one in Latin-1 bytes → 401 invalid_credentials', async () => {
    for (const authorization of [
      basic('uni@example.com', 'passwörd').authorization,
      `Basic ${Buffer.from('uni@example.com:pässwörd-✓-密码', 'latin1').toString('base64')}`,
    ]) {
      const r = await send(url, 'GET', '/orders', { headers: { authorization }, localAddress: from(13) });
      expectProblem(r, 401, 'invalid_credentials');
    }
  });

  it('a wrong password on a write → 401 and nothing written', async () => {
    const r = await send(url, 'POST', '/users', {
      headers: basic('ada.basic@example.com', 'wrong'),
      json: { email: 'new@example.com', password: 'x', roles: ['admin'] },
      localAddress: from(14),
    });
    expectProblem(r, 401, 'invalid_credentials');
  });

  it('unknown user and wrong password: the same status, body and headers, and about the same time', async () => {
    const unknown: Answer[] = [];
    const wrong: Answer[] = [];
    for (let i = 0; i < 4; i++) {
      unknown.push(
        await send(url, 'GET', '/orders', { headers: basic(`nobody${i}@example.com`, 'pw'), localAddress: from(15) }),
      );
      wrong.push(
        await send(url, 'GET', '/orders', { headers: basic('enum@example.com', `pw${i}`), localAddress: from(16) }),
      );
    }
    for (const r of [...unknown, ...wrong]) expectProblem(r, 401, 'invalid_credentials');
    sameProblem(unknown[0] as Answer, '', wrong[0] as Answer, '');
    const median = (rs: Answer[]) => [...rs.map((r) => r.cpuMs)].sort((a, b) => a - b)[Math.floor(rs.length / 2)] ?? 0;
    const [u, p] = [median(unknown), median(wrong)];
    // scrypt dominates both; a missing dummy hash would make the unknown user ~10–50× cheaper. Compared in CPU
    // time, which the server's work sets, not in wall time, which the machine's other load sets.
    expect(Math.max(u, p) / Math.max(1, Math.min(u, p)), `unknown ${u} ms, wrong password ${p} ms`).toBeLessThan(3);
  });
});

describe('A10 basic auth: the failed-login limiter', () => {
  let z: World;
  beforeAll(async () => {
    z = await startAuthService();
    for (const n of [1, 2, 3]) await createUser(z, `victim${n}@example.com`, `right-password-${n}`, ['customer']);
  });
  afterAll(() => z.s.close({ remove: true }));

  const login = (user: string, password: string, localAddress: string, method = 'GET', json?: unknown) =>
    send(z.url, method, '/orders', { headers: basic(user, password), localAddress, ...(json ? { json } : {}) });
  const expect429 = (r: Answer) => {
    expectProblem(r, 429, 'too_many_requests');
    const retry = Number(r.headers['retry-after']);
    expect(Number.isInteger(retry), String(r.headers['retry-after'])).toBe(true);
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(60);
  };

  it('15 wrong passwords for one user: 401 ×10, then 429 with Retry-After; then even the right one is 429', async () => {
    const before = await dbState(z.s);
    const statuses: number[] = [];
    for (let i = 0; i < 15; i++) {
      const r = await login('victim1@example.com', `guess-${i}`, '127.0.1.1', 'POST', { customer: z.a.id });
      statuses.push(r.status);
      if (i < 10) expectProblem(r, 401, 'invalid_credentials');
      else expect429(r);
    }
    expect(statuses).toEqual([...Array(10).fill(401), ...Array(5).fill(429)]);
    expect429(await login('victim1@example.com', 'right-password-1', '127.0.1.1'));
    expect(await dbState(z.s)).toEqual(before);
  });

  it('an unknown user is limited the same way (no enumeration through the limiter)', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push((await login('ghost@example.com', `g${i}`, '127.0.2.1')).status);
    expect(statuses).toEqual([...Array(10).fill(401), 429]);
  });

  it('per user name: 10 failures from 10 addresses block that user from an 11th address', async () => {
    for (let i = 0; i < 10; i++)
      expectProblem(await login('victim2@example.com', `nope-${i}`, `127.0.3.${i + 1}`), 401, 'invalid_credentials');
    expect429(await login('victim2@example.com', 'right-password-2', '127.0.3.200'));
  });

  it('per address: 10 failures for 10 user names block that address, not others', async () => {
    for (let i = 0; i < 10; i++)
      expectProblem(await login(`spray${i}@example.com`, 'Spring2026!', '127.0.4.1'), 401, 'invalid_credentials');
    expect429(await login('victim3@example.com', 'right-password-3', '127.0.4.1'));
    expectOk(await login('victim3@example.com', 'right-password-3', '127.0.4.2'));
  });

  // Two servers in one process on one SQLite file would wait on each other's write lock with the event loop blocked:
  // on SQLite the limiter's sharing is the storage contract's (two stores, one file); here it runs on PostgreSQL.
  it.runIf(ON_POSTGRES)(
    'counts across instances: failures spread over two servers on one database block the user on both',
    async () => {
      await createUser(z, 'victim4@example.com', 'right-password-4', ['customer']);
      const other = await servePlan(z.s.plan, { dbPath: z.s.dbPath });
      try {
        const on = (base: string, password: string, localAddress: string) =>
          send(base, 'GET', '/orders', { headers: basic('victim4@example.com', password), localAddress });
        for (let i = 0; i < 10; i++) {
          const r = await on(i % 2 ? other.url : z.url, `wrong-${i}`, `127.0.5.${i + 1}`);
          expectProblem(r, 401, 'invalid_credentials');
        }
        expect429(await on(other.url, 'right-password-4', '127.0.5.100'));
        expect429(await on(z.url, 'right-password-4', '127.0.5.101'));
      } finally {
        await other.close();
      }
    },
  );

  it('the limiter is for basic logins only: API keys and tokens from a blocked address still work', async () => {
    expectOk(await send(z.url, 'GET', '/orders', { headers: z.asAdmin, localAddress: '127.0.4.1' }));
    expectOk(await send(z.url, 'GET', '/orders', { headers: bearer(z.a.token), localAddress: '127.0.4.1' }));
  });
});

describe('A10 the failed-login limiter behind a trusted proxy', () => {
  const PROXY = '127.0.6.1';
  let z: World;
  beforeAll(async () => {
    z = await startAuthService({ spec: `${AUTH_SPEC}\nlimits:\n  trustProxy: [${PROXY}]\n` });
    await createUser(z, 'shared@example.com', 'right-password', ['customer']);
  });
  afterAll(() => z.s.close({ remove: true }));

  const login = (user: string, password: string, localAddress: string, forwardedFor?: string) =>
    send(z.url, 'GET', '/orders', {
      headers: { ...basic(user, password), ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}) },
      localAddress,
    });

  it('counts the client the proxy names: one client sprays and is blocked, another behind the same proxy is not', async () => {
    for (let i = 0; i < 10; i++)
      expectProblem(
        await login(`spray${i}@example.com`, 'Winter2026!', PROXY, '203.0.113.5'),
        401,
        'invalid_credentials',
      );
    expectProblem(await login('shared@example.com', 'right-password', PROXY, '203.0.113.5'), 429, 'too_many_requests');
    expectOk(await login('shared@example.com', 'right-password', PROXY, '203.0.113.9'));
  });

  it('a caller that is not the proxy cannot pick its key: rotating X-Forwarded-For still counts its own address', async () => {
    for (let i = 0; i < 10; i++)
      expectProblem(
        await login(`rotate${i}@example.com`, 'Winter2026!', '127.0.6.2', `198.51.100.${i + 1}`),
        401,
        'invalid_credentials',
      );
    expectProblem(
      await login('shared@example.com', 'right-password', '127.0.6.2', '198.51.100.99'),
      429,
      'too_many_requests',
    );
  });
});

describe('A11 a cookie-carried key on unsafe methods from another site', () => {
  let cookie: Record<string, string>;
  let origin = '';
  beforeAll(async () => {
    const k = await issueApiKey(w.s.store, { subject: 'cookie-user', roles: ['customer'] });
    cookie = { cookie: `theme=dark; nf_key=${k.key}` };
    origin = `http://${new URL(url).host}`;
  });

  it.each([
    ['Origin of another site', { origin: 'https://evil.example' }],
    ['Origin on another port', { origin: 'http://127.0.0.1:1' }],
    ['Origin: null', { origin: 'null' }],
    ['Sec-Fetch-Site: cross-site', { 'sec-fetch-site': 'cross-site' }],
    ['cross-site with a same-looking Origin', { origin: 'http://evil.example', 'sec-fetch-site': 'cross-site' }],
  ])('%s → 403 csrf on POST, PATCH, PUT-less DELETE; nothing changes', async (_name, site) => {
    const headers = { ...cookie, ...site };
    expectProblem(await send(url, 'POST', '/notes', { headers, json: { text: 'csrf' } }), 403, 'csrf');
    expectProblem(await send(url, 'PATCH', `/notes/${noteId}`, { headers, json: { text: 'csrf' } }), 403, 'csrf');
    expectProblem(await send(url, 'DELETE', `/notes/${noteId}`, { headers }), 403, 'csrf');
  });

  it('a cross-site GET is not a state change → 200', async () => {
    expectOk(await send(url, 'GET', '/notes', { headers: { ...cookie, origin: 'https://evil.example' } }));
  });

  it('same origin (Origin = Host, or Sec-Fetch-Site: same-origin) → the write goes through', async () => {
    allowWrites();
    const a = await send(url, 'POST', '/notes', { headers: { ...cookie, origin }, json: { text: 'same origin' } });
    expectOk(a, 201);
    const b = await send(url, 'PATCH', `/notes/${noteId}`, {
      headers: { ...cookie, 'sec-fetch-site': 'same-origin' },
      json: { text: 'edited' },
    });
    expectOk(b);
  });

  it('no Origin and no Sec-Fetch-Site (curl) → allowed', async () => {
    allowWrites();
    expectOk(await send(url, 'POST', '/notes', { headers: cookie, json: { text: 'from curl' } }), 201);
  });

  it('a header API key is not a cookie: a cross-site Origin does not matter for it', async () => {
    allowWrites();
    const r = await send(url, 'POST', '/orders', {
      headers: { ...w.asAdmin, origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
      json: { customer: w.a.id },
    });
    expectOk(r, 201);
  });
});

describe('A12 a 401 does not stick to the connection', () => {
  it('401 → 200 → 401 → 200 on one keep-alive connection', async () => {
    const agent = new HttpAgent({ keepAlive: true, maxSockets: 1 });
    try {
      const steps: Array<[Record<string, string>, number]> = [
        [{}, 401],
        [keyHeader(w.admin.key), 200],
        [bearer(`${w.a.token}x`), 401],
        [bearer(w.a.token), 200],
        [keyHeader('nfk_nope'), 401],
        [basic('ada.basic@example.com', 'correct horse battery'), 200],
      ];
      const answers: Answer[] = [];
      for (const [headers, status] of steps) {
        const r = await send(url, 'GET', '/orders', { headers, agent });
        expect(r.status, r.text.slice(0, 200)).toBe(status);
        answers.push(r);
      }
      expect(answers.slice(1).every((r) => r.reusedSocket)).toBe(true);
    } finally {
      agent.destroy();
    }
  });

  it('a refused POST with a body, then an accepted one, on the same connection', async () => {
    allowWrites();
    const agent = new HttpAgent({ keepAlive: true, maxSockets: 1 });
    try {
      const refused = await send(url, 'POST', '/orders', { json: { customer: w.a.id, note: 'x'.repeat(150) }, agent });
      expectProblem(refused, 401, 'unauthenticated');
      const ok = await send(url, 'POST', '/orders', { headers: bearer(w.a.token), json: { note: 'after 401' }, agent });
      expectOk(ok, 201);
      expect(ok.reusedSocket).toBe(true);
      expect(ok.body.customer).toBe(w.a.id);
      const again = await adminGet(`/orders/${ok.body.id}`);
      expect(again.body.note).toBe('after 401');
    } finally {
      agent.destroy();
    }
  });
});

// The basic users' passwords are stored as scrypt hashes (checked here because A10 creates users).
describe('A10 stored passwords', () => {
  it('every stored password is scrypt$…, never the text', async () => {
    const rows = await rowsOf(w.s, 'user');
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(String(row.password)).toMatch(/^scrypt\$/);
    expect(JSON.stringify(rows)).not.toContain('correct horse battery');
  });
});
