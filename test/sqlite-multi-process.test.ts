import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliServer, createKeyWithCli, startCliServer } from './helpers/cli-server.ts';
import { call, type JsonAnswer } from './helpers/serve-spec.ts';
import { waitFor } from './helpers/wait-for.ts';
import { type Receiver, startReceiver } from './helpers/webhook-receiver.ts';

// Issue 16, item 5: three `ninefold serve` processes on one SQLite file on one machine behave as one service.
// Each guarantee lives in the database, not in a process: unique values, the compare-and-set of a transition and
// its one event, key revocation (PRAGMA data_version tells each process that another one wrote), and webhook
// leases (one process at a time reads an endpoint's cursor), timers (each claimed by one process, under a lease).
// They held when this file was written: it guards them.
const SPEC = `
ninefold: 1
service: { name: many }
resources:
  Account:
    fields:
      handle: { type: string, required: true, unique: true }
    states:
      initial: open
      final: [closed]
      transitions:
        close: { from: open, to: closed }
  Hold:
    fields: { note: { type: string } }
    states:
      initial: held
      final: [lapsed]
      transitions:
        lapse: { from: held, to: lapsed, after: 1s }
auth:
  schemes: { key: { type: apiKey, in: header, name: X-Api-Key } }
  require: [key]
  roles: { staff: Runs accounts., admin: Manages keys and webhooks. }
events:
  auto: true
  webhooks: { allowPrivateTargets: true }
endpoints:
  Account: { operations: [list, get, create] }
  Hold: { operations: [create] }
`;
const CLIENTS = 50;

const dir = mkdtempSync(join(tmpdir(), 'ninefold-many-'));
const spec = join(dir, 'service.yaml');
const db = join(dir, 'many.db');
writeFileSync(spec, SPEC);
const servers: CliServer[] = [];
let receiver: Receiver | undefined;
/** One admin key and one staff key, made with `ninefold keys create` while the servers run. */
let admin: string;
let staff: { key: string; id: string };

const keysCreate = (role: string) => createKeyWithCli(spec, db, role);

beforeAll(async () => {
  // Three servers start together on a new file: one creates the tables, the others find them made.
  servers.push(...(await Promise.all([1, 2, 3].map(() => startCliServer(spec, ['--db', db])))));
  admin = (await keysCreate('admin')).key;
  staff = await keysCreate('staff');
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The i-th server, round robin: traffic spread over all three. */
const server = (i: number) => (servers[i % servers.length] as CliServer).url;
const asStaff = (i: number, method: string, path: string, json?: unknown): Promise<JsonAnswer> =>
  call(server(i), method, path, { headers: { 'x-api-key': staff.key }, ...(json ? { json } : {}) });

/** What the file holds, through a connection of its own. */
const inFile = <T>(query: (file: Database.Database) => T): T => {
  const file = new Database(db, { readonly: true });
  try {
    return query(file);
  } finally {
    file.close();
  }
};
const statusesOf = (answers: JsonAnswer[]) =>
  answers.reduce<Record<string, number>>((count, a) => {
    const key = `${a.status} ${a.body?.code ?? ''}`.trim();
    count[key] = (count[key] ?? 0) + 1;
    return count;
  }, {});

describe('three processes on one SQLite file', () => {
  it(`${CLIENTS} parallel creates of one unique value across the processes: exactly one 201`, async () => {
    const answers = await Promise.all(
      Array.from({ length: CLIENTS }, (_, i) => asStaff(i, 'POST', '/accounts', { handle: 'the-one' })),
    );
    expect(statusesOf(answers)).toEqual({ 201: 1, '409 unique_violation': CLIENTS - 1 });
    expect(inFile((f) => f.prepare("SELECT count(*) FROM account WHERE handle = 'the-one'").pluck().get())).toBe(1);
  });

  it(`a ${CLIENTS}-way transition race across the processes: one winner, one event`, async () => {
    const made = await asStaff(0, 'POST', '/accounts', { handle: 'racer' });
    expect(made.status).toBe(201);
    const id = made.body.id as string;
    const answers = await Promise.all(
      Array.from({ length: CLIENTS }, (_, i) => asStaff(i, 'POST', `/accounts/${id}/close`, {})),
    );
    expect(statusesOf(answers)).toEqual({ 200: 1, '409 invalid_transition': CLIENTS - 1 });
    const closedEvents = inFile((f) =>
      f
        .prepare("SELECT count(*) FROM _ninefold_events WHERE type = 'Account.closed' AND record_id = ?")
        .pluck()
        .get(id),
    );
    expect(closedEvents).toBe(1);
  });

  it('a key revoked through one process is refused by the others on their next request', async () => {
    for (let i = 0; i < servers.length; i++) expect((await asStaff(i, 'GET', '/accounts')).status).toBe(200);
    const revoked = await call(server(0), 'DELETE', `/_ninefold/keys/${staff.id}`, {
      headers: { 'x-api-key': admin },
    });
    expect(revoked.status).toBe(204);
    for (let i = 0; i < servers.length; i++) {
      const refused = await asStaff(i, 'GET', '/accounts');
      expect([i, refused.status, refused.body.code]).toEqual([i, 401, 'invalid_credentials']);
    }
  });

  it('a webhook endpoint gets each event once, whichever process wrote it (one process holds its lease)', async () => {
    receiver = await startReceiver();
    const made = await call(server(0), 'POST', '/webhook-endpoints', {
      json: { url: receiver.url, events: ['Account.created'] },
      headers: { 'x-api-key': admin },
    });
    expect(made.status).toBe(201);
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        call(server(i), 'POST', '/accounts', { json: { handle: `hooked-${i}` }, headers: { 'x-api-key': admin } }),
      ),
    );
    expect(statusesOf(answers)).toEqual({ 201: 30 });
    const ids = answers.map((a) => a.body.id as string).sort();
    const delivered = () =>
      receiver?.hits.map((h) => (JSON.parse(h.body) as { data: { record: { id: string } } }).data.record.id) ?? [];
    await waitFor(
      () => new Set(delivered()).size === ids.length,
      () => `every event delivered (${delivered().length} hits)`,
    );
    expect(delivered().sort()).toEqual(ids);
  });

  // The staff key is revoked by now: the admin key writes.
  it('timers due while three processes poll fire once each: one transition, one history entry, one event', async () => {
    const made = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        call(server(i), 'POST', '/holds', { json: { note: `hold ${i}` }, headers: { 'x-api-key': admin } }),
      ),
    );
    expect(statusesOf(made)).toEqual({ 201: 20 });
    const ids = made.map((a) => a.body.id as string);
    const lapsed = () =>
      inFile((f) => f.prepare("SELECT count(*) FROM hold WHERE status = 'lapsed'").pluck().get() as number);
    await waitFor(
      () => lapsed() === ids.length,
      () => `every hold lapsed (${lapsed()} so far)`,
      100,
    );
    for (const id of ids) {
      const counts = inFile((f) => ({
        history: f.prepare('SELECT count(*) FROM _ninefold_history WHERE record_id = ?').pluck().get(id),
        events: f
          .prepare("SELECT count(*) FROM _ninefold_events WHERE record_id = ? AND type != 'Hold.created'")
          .pluck()
          .get(id),
      }));
      expect([id, counts]).toEqual([id, { history: 1, events: 1 }]);
    }
  });
});
