import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { eventId } from '../src/storage/event-ids.ts';
import { waitFor } from './helpers/wait-for.ts';

// The crash test: while records are created, the server is killed with SIGKILL at random moments and started
// again. Afterwards every committed record has its event, the receiver got every event at least once (retries
// keep their webhook-id), and no event exists for a write that did not commit.
const SPEC = `
ninefold: 1
service: { name: crash-test }
resources:
  Entry:
    fields: { n: { type: integer, required: true } }
events:
  auto: true
  webhooks: { retry: [100ms, 200ms, 400ms, 800ms, 1s, 1s, 1s], timeout: 2s, allowPrivateTargets: true }
endpoints:
  Entry: { operations: [list, create] }
`;
const ROOT = resolve(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'ninefold-crash-'));
const spec = join(dir, 'service.yaml');
const db = join(dir, 'crash.db');
writeFileSync(spec, SPEC);
/** Every server this test started, killed at the end whatever happened (a failed run must not leave one behind). */
const started = new Set<ChildProcess>();
afterAll(() => {
  for (const child of started) if (child.exitCode === null) child.kill('SIGKILL');
  hook.close();
  rmSync(dir, { recursive: true, force: true });
});

const received = new Map<string, number>();
const hook = createServer((req, res) => {
  const id = String(req.headers['webhook-id']);
  req.resume();
  req.on('end', () => {
    received.set(id, (received.get(id) ?? 0) + 1);
    res.writeHead(200).end();
  });
});

const start = async (port: number): Promise<ChildProcess> => {
  const child = spawn(
    process.execPath,
    [join(ROOT, 'bin/ninefold.js'), 'serve', spec, '--db', db, '--port', String(port), '--log-level', 'error'],
    {
      stdio: 'ignore',
    },
  );
  started.add(child);
  // A node process can take many seconds to start on a loaded machine: no deadline but the test's.
  await waitFor(
    () =>
      fetch(`http://127.0.0.1:${port}/healthz`).then(
        (r) => r.ok,
        () => false,
      ),
    'the server to answer /healthz',
    25,
  );
  return child;
};

describe('events survive SIGKILL', () => {
  it('every committed write has exactly one event, delivered at least once; no event without its write', async () => {
    await new Promise<void>((ok) => hook.listen(0, '127.0.0.1', ok));
    const port = 20000 + Math.floor(Math.random() * 20000);
    const base = `http://127.0.0.1:${port}`;
    let server = await start(port);
    const made = await fetch(`${base}/webhook-endpoints`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: `http://127.0.0.1:${(hook.address() as AddressInfo).port}/` }),
    });
    expect(made.status).toBe(201);

    let n = 0;
    const confirmed = new Set<number>();
    const writer = async (stopAt: number) => {
      while (n < stopAt) {
        const mine = n++;
        try {
          const r = await fetch(`${base}/entries`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ n: mine }),
          });
          if (r.status === 201) confirmed.add(mine);
        } catch {
          // The server died under this request: it may or may not have committed.
          await new Promise((ok) => setTimeout(ok, 20));
        }
      }
    };
    for (const stopAt of [250, 500, 750, 1000]) {
      const writers = Array.from({ length: 8 }, () => writer(stopAt));
      if (stopAt < 1000) {
        // Killed while writes are under way: after a random number of them, not a random time (which a loaded
        // machine could spend before the first one is answered).
        const killAt = confirmed.size + 10 + Math.floor(Math.random() * 60);
        await waitFor(
          () => confirmed.size >= killAt || n >= stopAt,
          () => `${killAt} confirmed writes`,
          5,
        );
        server.kill('SIGKILL');
        await new Promise((ok) => server.once('exit', ok));
        await Promise.all(writers);
        server = await start(port);
      } else await Promise.all(writers);
    }

    // Every entry on disk has one created event, and every event names an entry on disk.
    const readDb = () => {
      const conn = new Database(db, { readonly: true });
      try {
        const rows = conn.prepare('SELECT id, n FROM entry').all() as Array<{ id: string; n: number }>;
        const events = (
          conn
            .prepare("SELECT seq, time, record_id FROM _ninefold_events WHERE type = 'Entry.created'")
            .all() as Array<{ seq: number; time: string; record_id: string }>
        ).map((e) => ({ id: eventId(e.seq, Date.parse(e.time)), record_id: e.record_id }));
        return { rows, events };
      } finally {
        conn.close();
      }
    };
    const { rows, events } = readDb();
    const onDisk = new Set(rows.map((r) => r.id));
    for (const c of confirmed)
      expect(
        rows.some((r) => r.n === c),
        `entry ${c} was confirmed`,
      ).toBe(true);
    expect(events.length).toBe(rows.length);
    expect(new Set(events.map((e) => e.record_id))).toEqual(onDisk);

    // Every event reaches the receiver (duplicates allowed, each under its own event id).
    await waitFor(
      () => events.every((e) => received.has(e.id)),
      () => `every event to arrive; ${events.filter((e) => !received.has(e.id)).length} have not`,
      50,
    );
    expect([...received.keys()].every((id) => events.some((e) => e.id === id))).toBe(true);
    server.kill('SIGTERM');
    await new Promise((ok) => server.once('exit', ok));
  });
});
