import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeyStatus, issueApiKey, parseApiKey, verifyApiKey } from '../src/parts/auth/keys.ts';
import { parseDuration } from '../src/spec/units.ts';
import { SqliteStore } from '../src/storage/index.ts';
import { contractPlan, tempDir } from './storage/contract.ts';

const dir = tempDir();
let store: SqliteStore;

beforeAll(async () => {
  store = new SqliteStore({ path: join(dir, 'keys.db') });
  await store.migrate(contractPlan());
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const DAY = 86_400_000;

describe('issueApiKey', () => {
  it('returns nfk_<id>_<secret> once and stores only the SHA-256 of the secret', async () => {
    const now = new Date('2026-03-01T12:00:00.000Z');
    const { record, key } = await issueApiKey(store, { subject: 'staff-1', roles: ['admin'], expiresInMs: DAY, now });
    expect(key).toMatch(/^nfk_key_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
    const parsed = parseApiKey(key);
    expect(parsed?.id).toBe(record.id);
    expect(record).toEqual({
      id: record.id,
      secretHash: createHash('sha256')
        .update(parsed?.secret ?? '')
        .digest('hex'),
      subject: 'staff-1',
      roles: ['admin'],
      createdAt: '2026-03-01T12:00:00.000Z',
      expiresAt: '2026-03-02T12:00:00.000Z',
    });
    expect(await store.apiKeys.find(record.id)).toEqual(record);
    expect(JSON.stringify(await store.apiKeys.list())).not.toContain(parsed?.secret);
  });

  it('defaults the subject to the id and never expires without expiresInMs', async () => {
    const { record } = await issueApiKey(store, { roles: [] });
    expect(record.subject).toBe(record.id);
    expect(record.expiresAt).toBeUndefined();
  });

  it('issues distinct ids and secrets', async () => {
    const keys = await Promise.all([1, 2, 3, 4].map(() => issueApiKey(store, { roles: ['admin'] })));
    expect(new Set(keys.map((k) => k.record.id)).size).toBe(4);
    expect(new Set(keys.map((k) => parseApiKey(k.key)?.secret)).size).toBe(4);
  });
});

describe('parseApiKey', () => {
  const id = 'key_0123456789abcdef';
  const secret = `${'A'.repeat(20)}_-${'z'.repeat(21)}`;
  const key = `nfk_${id}_${secret}`;

  it('splits a key whose secret holds _ and - at the first _ after the id', () => {
    expect(parseApiKey(key)).toEqual({ id, secret });
  });

  it.each([
    ['leading space', ` ${key}`],
    ['trailing newline', `${key}\n`],
    ['upper-case prefix', key.replace('nfk_', 'NFK_')],
    ['upper-case id', key.replace(id, id.toUpperCase())],
    ['short secret', key.slice(0, -1)],
    ['long secret', `${key}x`],
    ['short id', key.replace(id, 'key_0123456789abcde')],
    ['no prefix', `${id}_${secret}`],
    ['empty', ''],
    ['over the length cap', `${key}${'a'.repeat(200)}`],
  ])('refuses %s', (_, text) => {
    expect(parseApiKey(text)).toBeUndefined();
  });
});

describe('verifyApiKey', () => {
  const now = new Date('2026-03-01T12:00:00.000Z');
  const secret = 's'.repeat(43);
  const record = {
    id: 'key_0123456789abcdef',
    secretHash: createHash('sha256').update(secret).digest('hex'),
    subject: 'a',
    roles: [],
    createdAt: '2026-01-01T00:00:00.000Z',
  };

  it('accepts the right secret of a live key, refuses any other', () => {
    expect(verifyApiKey(record, secret, now)).toBe('ok');
    expect(verifyApiKey(record, 't'.repeat(43), now)).toBe('invalid');
    expect(verifyApiKey(undefined, secret, now)).toBe('invalid');
    expect(verifyApiKey({ ...record, secretHash: 'not hex' }, secret, now)).toBe('invalid');
  });

  it('refuses a revoked key and an expired one, from the instant it expires', () => {
    expect(verifyApiKey({ ...record, revokedAt: '2026-02-01T00:00:00.000Z' }, secret, now)).toBe('invalid');
    expect(verifyApiKey({ ...record, expiresAt: now.toISOString() }, secret, now)).toBe('invalid');
    expect(verifyApiKey({ ...record, expiresAt: '2026-03-01T12:00:00.001Z' }, secret, now)).toBe('ok');
    expect(apiKeyStatus({ ...record, expiresAt: now.toISOString() }, now)).toBe('expired');
    expect(apiKeyStatus({ ...record, expiresAt: now.toISOString(), revokedAt: now.toISOString() }, now)).toBe(
      'revoked',
    );
  });

  it('refuses a key revoked in the store on the next lookup', async () => {
    const { record: issued, key } = await issueApiKey(store, { roles: ['admin'] });
    const { id, secret: s } = parseApiKey(key) ?? { id: '', secret: '' };
    expect(verifyApiKey(await store.apiKeys.find(id), s, new Date())).toBe('ok');
    expect(await store.apiKeys.revoke(issued.id, new Date())).toBe(true);
    expect(verifyApiKey(await store.apiKeys.find(id), s, new Date())).toBe('invalid');
  });
});

describe('--expires durations', () => {
  it.each([
    ['10m', 600_000],
    ['24h', DAY],
    ['90d', 90 * DAY],
    ['P90D', 90 * DAY],
    ['PT24H', DAY],
  ])('%s', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });
});
