import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { type CliServer, startCliServer } from './helpers/cli-server.ts';

// Issue 16 (found while fixing issue 14's idempotency): with two servers on one SQLite file, a key sent to both
// at once created two records, because the key was looked up before the transaction and guarded in one process's
// memory. The key is now claimed inside the store's transaction.
const SPEC = `
ninefold: 1
service: { name: idem-processes }
resources:
  Order: { fields: { note: { type: string } } }
endpoints:
  Order: { operations: [list, create] }
`;

describe('Idempotency-Key across processes on one database', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ninefold-idem-'));
  const spec = join(dir, 'service.yaml');
  const db = join(dir, 'orders.db');
  writeFileSync(spec, SPEC);
  const servers: CliServer[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('a key sent to two servers at once creates one record; both answers are that record', async () => {
    servers.push(await startCliServer(spec, ['--db', db]));
    servers.push(await startCliServer(spec, ['--db', db]));
    const [a, b] = servers as [CliServer, CliServer];
    const send = (url: string, key: string) =>
      fetch(`${url}/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify({ note: key }),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as { id?: string; code?: string } }));
    const keys = Array.from({ length: 20 }, (_, i) => `key-${i}`);
    const answers = await Promise.all(keys.flatMap((key) => [send(a.url, key), send(b.url, key)]));
    for (let i = 0; i < keys.length; i++) {
      const pair = [answers[2 * i], answers[2 * i + 1]];
      // Each answer is the one record, or (while the other still held the key) 409 idempotency_key_in_use.
      const ids = new Set(pair.filter((x) => x?.status === 201).map((x) => x?.body.id));
      expect(ids.size, keys[i]).toBe(1);
      for (const x of pair)
        if (x?.status !== 201) expect([x?.status, x?.body.code]).toEqual([409, 'idempotency_key_in_use']);
    }
    const file = new Database(db, { readonly: true });
    try {
      const notes = file.prepare('SELECT note FROM "order" ORDER BY note').pluck().all() as string[];
      expect(notes.length).toBe(keys.length);
      expect(new Set(notes).size).toBe(keys.length);
    } finally {
      file.close();
    }
  });
});
