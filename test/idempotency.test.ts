import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type Served, serveSpec } from './helpers/serve-spec.ts';

const SPEC = `
ninefold: 1
service: { name: idem, title: Idempotency, purpose: Retries with Idempotency-Key over HTTP. }
resources:
  Payment:
    idPrefix: pay
    fields:
      amount: { type: decimal, required: true }
      memo: { type: string }
endpoints:
  Payment: { operations: [list, get, create, update], path: /payments }
`;

let s: Served;
beforeAll(async () => {
  s = await serveSpec(SPEC, { logLevel: 'error' });
});
afterAll(() => s.close({ remove: true }));

const pay = (key: string, json: unknown) =>
  call(s.url, 'POST', '/payments', { json, headers: { 'idempotency-key': key } });

describe('Idempotency-Key', () => {
  it('same key and same body replays the first answer; one row is written', async () => {
    const before = await s.countRows('payment');
    const first = await pay('k-replay', { amount: '10.00' });
    const again = await pay('k-replay', { amount: '10.00' });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('location')).toBe(first.headers.get('location'));
    expect(again.headers.get('etag')).toBe(first.headers.get('etag'));
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await s.countRows('payment')).toBe(before + 1);
  });

  it('same key with another body is 422 idempotency_key_reused and writes nothing', async () => {
    await pay('k-other', { amount: '1.00' });
    const before = await s.countRows('payment');
    const r = await pay('k-other', { amount: '2.00' });
    expect(r.status).toBe(422);
    expect(r.body.code).toBe('idempotency_key_reused');
    expect(await s.countRows('payment')).toBe(before);
  });

  it('same key on another path is refused too (the path is part of the request)', async () => {
    const first = await pay('k-path', { amount: '3.00' });
    const r = await call(s.url, 'PATCH', `/payments/${first.body.id}`, {
      json: { amount: '3.00' },
      headers: { 'idempotency-key': 'k-path' },
    });
    expect(r.status).toBe(422);
    expect(r.body.code).toBe('idempotency_key_reused');
  });

  it('a failed request stores nothing: a corrected retry with the same key runs and is created', async () => {
    const before = await s.countRows('payment');
    const bad = await pay('k-fail', { amount: 5 });
    expect(bad.status).toBe(422);
    expect(bad.body.code).toBe('validation_failed');
    expect(await s.countRows('payment')).toBe(before);
    const good = await pay('k-fail', { amount: '5.00' });
    expect(good.status).toBe(201);
    expect(good.headers.get('idempotent-replayed')).toBeNull();
    expect(await s.countRows('payment')).toBe(before + 1);
  });

  it('concurrent requests with one key: one 201, the others 409 idempotency_key_in_use or a replay; one row', async () => {
    const before = await s.countRows('payment');
    const answers = await Promise.all(Array.from({ length: 8 }, () => pay('k-race', { amount: '7.00' })));
    const created = answers.filter((a) => a.status === 201 && !a.headers.get('idempotent-replayed'));
    expect(created).toHaveLength(1);
    for (const a of answers) {
      if (a.status === 409) expect(a.body.code).toBe('idempotency_key_in_use');
      else expect(a.text).toBe(created[0]?.text);
    }
    expect(await s.countRows('payment')).toBe(before + 1);
  });

  it('an empty or over-long key is 400 idempotency_key_invalid', async () => {
    const before = await s.countRows('payment');
    for (const key of ['', 'x'.repeat(256)]) {
      const r = await call(s.url, 'POST', '/payments', {
        json: { amount: '1.00' },
        headers: { 'idempotency-key': key },
      });
      expect(r.status).toBe(400);
      expect(r.body.code).toBe('idempotency_key_invalid');
    }
    expect(await s.countRows('payment')).toBe(before);
  });
});

describe('Idempotency-Key across a restart', () => {
  it('the stored answer survives stopping the server and reopening the same database file', async () => {
    const first = await serveSpec(SPEC);
    const created = await call(first.url, 'POST', '/payments', {
      json: { amount: '42.00' },
      headers: { 'idempotency-key': 'k-restart' },
    });
    expect(created.status).toBe(201);
    await first.close();
    const second = await serveSpec(SPEC, { dbPath: first.dbPath });
    try {
      const replay = await call(second.url, 'POST', '/payments', {
        json: { amount: '42.00' },
        headers: { 'idempotency-key': 'k-restart' },
      });
      expect(replay.status).toBe(201);
      expect(replay.text).toBe(created.text);
      expect(await second.countRows('payment')).toBe(1);
      const reused = await call(second.url, 'POST', '/payments', {
        json: { amount: '43.00' },
        headers: { 'idempotency-key': 'k-restart' },
      });
      expect(reused.body.code).toBe('idempotency_key_reused');
    } finally {
      await second.close({ remove: true });
    }
  });
});
