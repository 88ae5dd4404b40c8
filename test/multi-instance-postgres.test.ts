import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventId } from '../src/storage/event-ids.ts';
import { type CliServer, startCliServer } from './helpers/cli-server.ts';
import { dropSchemas, freshPgUrl, PG_URL, pgExec, schemaOf } from './helpers/postgres.ts';
import { startTcpProxy, type TcpProxy } from './helpers/tcp-proxy.ts';
import { waitFor } from './helpers/wait-for.ts';

// Issue 16: three `ninefold serve` processes on one PostgreSQL schema, reached through a TCP proxy the test can cut
// (the machine's PostgreSQL stays up for other tests), with traffic spread over all three as a balancer would:
// a 503 with Retry-After, or a refused connection (nothing sent), is tried on the next instance; anything else a
// client sees, a reset connection included, is a failure. A webhook receiver here counts deliveries by webhook-id.
const ROOT = resolve(import.meta.dirname, '..');
const SPEC = `
ninefold: 1
service: { name: fleet, title: Fleet, purpose: Three instances on one database. }
resources:
  Ticket:
    idPrefix: tkt
    fields:
      code: { type: string, required: true, unique: true }
    states:
      initial: open
      final: [closed]
      transitions:
        close: { from: open, to: closed }
auth:
  schemes: { key: { type: apiKey, in: header, name: X-Api-Key } }
  require: [key]
  roles: { admin: Everything }
events:
  auto: true
  stream: { path: /events/stream }
  webhooks: { retry: [100ms, 200ms], allowPrivateTargets: true }
endpoints:
  Ticket: { operations: [list, get, create], path: /tickets }
`;

const dir = mkdtempSync(join(tmpdir(), 'ninefold-fleet-'));
const spec = join(dir, 'service.yaml');
const directUrl = freshPgUrl();
const schema = schemaOf(directUrl);
let proxy: TcpProxy;
let proxiedUrl: string;
let key: string;
/** The instances in the balancer's rotation. */
const fleet: CliServer[] = [];

// The grace is above the 5 s keep-alive time-out a drain waits out for its idle connections (docs/scaling.md).
const startInstance = () => startCliServer(spec, ['--db', proxiedUrl, '--grace', '8']);

// ---- the webhook receiver: deliveries by endpoint and webhook-id; on request, which process sent the next one

interface Delivery {
  readonly eventId: string;
  readonly type: string;
  readonly recordId: string;
  times: number;
}
const received = new Map<string, Delivery>();
let identifyNext: ((pid: number) => void) | undefined;
const receiver: Server = createServer((req, res) => {
  let body = '';
  req.on('data', (chunk: Buffer) => {
    body += chunk.toString('utf8');
  });
  req.on('end', () => {
    const event = JSON.parse(body) as { id: string; type: string; data: { record?: { id: string } } };
    const id = `${req.url} ${req.headers['webhook-id']}`;
    const seen = received.get(id);
    if (seen) seen.times++;
    else received.set(id, { eventId: event.id, type: event.type, recordId: event.data.record?.id ?? '', times: 1 });
    if (identifyNext) {
      // The sender's socket is open while it waits for this answer: `ss` names the process that holds it. Both ends
      // are named: the same local port can be in use by another process's connection to another address.
      const shown = execFileSync(
        'ss',
        ['-tnpH', `sport = :${req.socket.remotePort} and dport = :${req.socket.localPort}`],
        { encoding: 'utf8' },
      );
      const pid = Number(/pid=(\d+)/.exec(shown)?.[1]);
      if (pid) identifyNext(pid);
    }
    res.end('ok');
  });
});
receiver.keepAliveTimeout = 60_000;
const hookUrl = (name: string) => `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook/${name}`;
const deliveredTo = (name: string) => [...received].filter(([id]) => id.startsWith(`/hook/${name} `));

// ---- clients

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: Record<string, unknown>;
}

const direct = async (server: CliServer, method: string, path: string, body?: unknown, withKey = key) => {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { 'x-api-key': withKey, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
  } satisfies Answer;
};

const codeOf = (error: unknown): string => {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? String(error);
};

let turn = 0;
const stats = { retried503: 0, refused: 0, storageUnavailable: 0 };

/** One request as a balancer sends it: the next instance in turn, then the next one after a 503 or a refusal. */
const balanced = async (method: string, path: string, body?: unknown): Promise<Answer & { retried: boolean }> => {
  let retried = false;
  for (let tries = 1; ; tries++) {
    const server = fleet[turn++ % fleet.length] as CliServer;
    try {
      const answer = await direct(server, method, path, body);
      if (answer.status !== 503) return { ...answer, retried };
      expect(answer.headers.get('retry-after')).toMatch(/^\d+$/);
      if (answer.body.code === 'storage_unavailable') stats.storageUnavailable++;
      stats.retried503++;
    } catch (error) {
      if (codeOf(error) !== 'ECONNREFUSED') throw error;
      stats.refused++;
    }
    retried = true;
    if (tries % fleet.length === 0) await new Promise((ok) => setTimeout(ok, 50));
  }
};

/** Creates tickets through the balancer, `width` at a time, until `count` are done or `stop` is called. */
const startLoad = (prefix: string, width: number, count = Number.POSITIVE_INFINITY) => {
  const acked: string[] = [];
  const failures: string[] = [];
  let next = 0;
  let stopped = false;
  const lane = async () => {
    while (!stopped && next < count) {
      const code = `${prefix}-${next++}`;
      try {
        const made = await balanced('POST', '/tickets', { code });
        if (made.status === 201) acked.push(made.body.id as string);
        // A create whose commit raced a lost connection answered 503 and was retried: its value is taken, by itself.
        else if (!(made.retried && made.status === 409)) failures.push(`${code}: ${made.status} ${made.body.code}`);
      } catch (error) {
        failures.push(`${code}: ${codeOf(error)}`);
      }
    }
  };
  const lanes = Promise.all(Array.from({ length: width }, lane));
  return {
    acked,
    failures,
    done: lanes,
    stop: async () => {
      stopped = true;
      await lanes;
    },
  };
};

// ---- what the database holds (read directly, not through the proxy)

const table = async () =>
  (
    await pgExec(
      "SELECT table_name AS t FROM information_schema.tables WHERE table_schema = $1 AND table_name NOT LIKE '\\_ninefold%'",
      [schema],
    )
  ).rows[0]?.t as string;

/** The acknowledged ids with no record or no sequenced `Ticket.created` event. */
const missing = async (ids: readonly string[]) => {
  const t = await table();
  const records = await pgExec(`SELECT id FROM "${schema}"."${t}" WHERE id = ANY($1)`, [ids]);
  const events = await pgExec(
    `SELECT record_id FROM "${schema}"._ninefold_events WHERE type = 'Ticket.created' AND seq IS NOT NULL AND record_id = ANY($1)`,
    [ids],
  );
  const have = new Set([...records.rows.map((r) => r.id), ...events.rows.map((r) => `event ${r.record_id}`)]);
  return ids.flatMap((id) => [id, `event ${id}`]).filter((x) => !have.has(x));
};

/** Every sequenced event's id (seq order) has reached the endpoint `name` at least once. */
const allDeliveredTo = async (name: string, types: readonly string[]) => {
  const events = await pgExec(
    `SELECT seq::int AS seq, time FROM "${schema}"._ninefold_events WHERE seq IS NOT NULL AND type = ANY($1) ORDER BY seq`,
    [types],
  );
  const got = new Set(deliveredTo(name).map(([, d]) => d.eventId));
  const ids = events.rows.map((r) => eventId(r.seq, Date.parse(r.time)));
  return { total: ids.length, undelivered: ids.filter((id) => !got.has(id)).length };
};

const keys = (...args: string[]) =>
  promisify(execFile)(process.execPath, [join(ROOT, 'bin/ninefold.js'), 'keys', ...args], { cwd: dir });

beforeAll(async () => {
  writeFileSync(spec, SPEC);
  const pg = new URL(PG_URL);
  proxy = await startTcpProxy(pg.hostname, Number(pg.port || 5432));
  pg.port = String(proxy.port);
  pg.searchParams.set('schema', schema);
  proxiedUrl = pg.toString();
  await new Promise<void>((ok) => receiver.listen(0, '127.0.0.1', ok));
  fleet.push(...(await Promise.all([startInstance(), startInstance(), startInstance()])));
  key = (await keys('create', spec, '--role', 'admin', '--db', directUrl)).stdout.trimEnd().split('\n').pop() ?? '';
});

afterAll(async () => {
  proxy?.restore();
  await Promise.all(fleet.map((s) => s.stop()));
  await proxy?.close();
  receiver.closeAllConnections();
  await new Promise<void>((ok) => receiver.close(() => ok()));
  await dropSchemas();
  rmSync(dir, { recursive: true, force: true });
});

describe('three instances on one PostgreSQL schema', () => {
  it('started together, they migrated the schema once', async () => {
    // Every table of the schema was made by one transaction: the instances that came second and third made none.
    const made = await pgExec(
      "SELECT count(*)::int AS tables, count(DISTINCT xmin::text)::int AS transactions FROM pg_class WHERE relnamespace = $1::regnamespace AND relkind = 'r'",
      [schema],
    );
    expect(made.rows[0]).toMatchObject({ transactions: 1 });
    expect(made.rows[0]?.tables).toBeGreaterThan(5);
    for (const name of ['all', 'closed']) {
      const made = await direct(fleet[0] as CliServer, 'POST', '/webhook-endpoints', {
        url: hookUrl(name),
        events: name === 'all' ? ['Ticket.created', 'Ticket.closed'] : ['Ticket.closed'],
      });
      expect(made.status).toBe(201);
    }
  });

  it('50 creates of one unique value over three instances: one 201, 49 unique_violation', async () => {
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => direct(fleet[i % 3] as CliServer, 'POST', '/tickets', { code: 'once' })),
    );
    expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
    const refused = answers.filter((a) => a.status !== 201);
    expect(refused.map((a) => `${a.status} ${a.body.code}`)).toEqual(Array(49).fill('409 unique_violation'));
    for (const a of answers) expect(JSON.stringify(a.body)).not.toMatch(/SELECT|INSERT|postgres|node_modules|at \//i);
  });

  it('a 50-way transition race over three instances: one winner, one event, one delivery per endpoint', async () => {
    const made = await direct(fleet[0] as CliServer, 'POST', '/tickets', { code: 'race' });
    const id = made.body.id as string;
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => direct(fleet[i % 3] as CliServer, 'POST', `/tickets/${id}/close`, {})),
    );
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 409 && a.body.code === 'invalid_transition')).toHaveLength(49);
    const events = await pgExec(`SELECT type FROM "${schema}"._ninefold_events WHERE record_id = $1 ORDER BY seq`, [
      id,
    ]);
    expect(events.rows.map((r) => r.type)).toEqual(['Ticket.created', 'Ticket.closed']);
    const closedAt = (name: string) =>
      deliveredTo(name).filter(([, d]) => d.recordId === id && d.type === 'Ticket.closed');
    await waitFor(
      () => closedAt('all').length > 0 && closedAt('closed').length > 0,
      'the close delivered to both endpoints',
    );
    // One more event after it, delivered to both: anything still to come about the race would have come first.
    const after = await direct(fleet[1] as CliServer, 'POST', '/tickets', { code: 'after-race' });
    await direct(fleet[2] as CliServer, 'POST', `/tickets/${after.body.id}/close`, {});
    await waitFor(
      () => ['all', 'closed'].every((n) => deliveredTo(n).some(([, d]) => d.recordId === after.body.id)),
      'the next close delivered to both endpoints',
    );
    for (const name of ['all', 'closed']) expect(closedAt(name).map(([, d]) => d.times)).toEqual([1]);
  });

  it('2,000 creates: 2,000 events in one order through every instance, each delivered', async () => {
    const load = startLoad('bulk', 30, 2_000);
    await load.done;
    expect(load.failures).toEqual([]);
    expect(load.acked).toHaveLength(2_000);
    const bulk = new Set(load.acked);
    const logs = await Promise.all(
      fleet.map(async (server) => {
        const ids: string[] = [];
        let cursor: string | null = '';
        while (cursor !== null) {
          const page = await direct(server, 'GET', `/events?limit=100${cursor ? `&cursor=${cursor}` : ''}`);
          expect(page.status).toBe(200);
          for (const e of page.body.data as Array<{ id: string; data: { record?: { id: string } } }>) {
            ids.push(`${e.id} ${e.data.record?.id}`);
          }
          cursor = page.body.nextCursor as string | null;
        }
        return ids;
      }),
    );
    expect(logs[1]).toEqual(logs[0]);
    expect(logs[2]).toEqual(logs[0]);
    expect(logs[0]?.filter((e) => bulk.has(e.split(' ')[1] as string))).toHaveLength(2_000);
    let last = { total: 0, undelivered: -1 };
    await waitFor(
      async () => {
        last = await allDeliveredTo('all', ['Ticket.created', 'Ticket.closed']);
        return last.undelivered === 0;
      },
      () => `every event delivered: ${JSON.stringify(last)}`,
      200,
    );
    expect(last.total).toBeGreaterThanOrEqual(2_000);
  });

  it('kill -9 of the instance delivering mid-load: the others take its webhook work over, nothing acknowledged lost', async () => {
    const load = startLoad('kill', 12);
    await waitFor(() => load.acked.length >= 150, 'load under way');
    const sender = await new Promise<number>((ok) => {
      identifyNext = ok;
    });
    identifyNext = undefined;
    const victim = fleet.find((s) => s.child.pid === sender);
    expect(victim, `pid ${sender} is one of the instances`).toBeDefined();
    fleet.splice(fleet.indexOf(victim as CliServer), 1);
    victim?.child.kill('SIGKILL');
    await waitFor(() => victim?.child.exitCode !== null || victim?.child.signalCode !== null, 'the kill');
    const ackedAtKill = load.acked.length;
    await waitFor(() => load.acked.length >= ackedAtKill + 150, 'load going on without it');
    await load.stop();
    // Requests in flight on the killed instance failed (not acknowledged); none elsewhere.
    expect(load.failures.every((f) => /ECONNRESET|other side closed|terminated|socket/i.test(f))).toBe(true);
    expect(await missing(load.acked)).toEqual([]);
    let last = { total: 0, undelivered: -1 };
    await waitFor(
      async () => {
        last = await allDeliveredTo('all', ['Ticket.created', 'Ticket.closed']);
        return last.undelivered === 0;
      },
      () => `every event delivered after the kill: ${JSON.stringify(last)}`,
      200,
    );
    fleet.push(await startInstance());
  });

  it('a rolling restart under load: no failure a client sees but 503s with Retry-After', async () => {
    const load = startLoad('roll', 12);
    for (let i = 0; i < 3; i++) {
      const old = fleet[0] as CliServer;
      const seen = load.acked.length;
      await waitFor(() => load.acked.length >= seen + 50, 'load under way');
      fleet.push(await startInstance());
      const exited = new Promise<number | null>((ok) => old.child.once('exit', ok));
      old.child.kill('SIGTERM');
      // As a balancer's health check does: out of rotation once /readyz says so; what it was sent meanwhile is drained.
      await waitFor(
        async () => (await direct(old, 'GET', '/readyz').catch(() => ({ status: 0 }))).status !== 200,
        'the old instance unready',
      );
      fleet.splice(fleet.indexOf(old), 1);
      expect(await exited).toBe(0);
    }
    const seen = load.acked.length;
    await waitFor(() => load.acked.length >= seen + 50, 'load on the new instances');
    await load.stop();
    expect(load.failures).toEqual([]);
    expect(await missing(load.acked)).toEqual([]);
  });

  it('PostgreSQL out of reach under load: 503 storage_unavailable, no crash, ready again without a restart', async () => {
    const load = startLoad('outage', 9);
    await waitFor(() => load.acked.length >= 50, 'load under way');
    const before = stats.storageUnavailable;
    const pids = fleet.map((s) => s.child.pid);
    proxy.cut();
    const ready = () => Promise.all(fleet.map((s) => direct(s, 'GET', '/readyz')));
    await waitFor(async () => (await ready()).every((r) => r.status === 503), 'every /readyz at 503');
    for (const r of await ready()) {
      expect(r.body.code).toBe('storage_unavailable');
      expect(r.headers.get('retry-after')).toMatch(/^\d+$/);
    }
    await waitFor(() => stats.storageUnavailable >= before + 30, 'writes refused with storage_unavailable');
    proxy.restore();
    await waitFor(async () => (await ready()).every((r) => r.status === 200), 'every /readyz at 200 again');
    const seen = load.acked.length;
    await waitFor(() => load.acked.length >= seen + 50, 'writes acknowledged again');
    await load.stop();
    expect(fleet.map((s) => s.child.pid)).toEqual(pids);
    expect(fleet.every((s) => s.child.exitCode === null)).toBe(true);
    expect(load.failures).toEqual([]);
    expect(await missing(load.acked)).toEqual([]);
  });

  it('after it all, a write on one instance reaches a stream open on another, and a key revoked through one is refused by the next', async () => {
    const [a, b, c] = fleet as [CliServer, CliServer, CliServer];
    let text = '';
    const stream = httpRequest(`${a.url}/events/stream`, { headers: { 'x-api-key': key } }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
    });
    stream.on('error', () => undefined);
    stream.end();
    await waitFor(() => text.length > 0, 'the stream to open');
    const made = await direct(b, 'POST', '/tickets', { code: 'streamed' });
    expect(made.status).toBe(201);
    await waitFor(
      () => text.includes(made.body.id as string),
      () => `the write on the stream; got ${text.slice(-500)}`,
    );
    stream.destroy();

    const issued = await direct(a, 'POST', '/_ninefold/keys', { roles: ['admin'] });
    expect(issued.status).toBe(201);
    const second = issued.body.key as string;
    expect((await direct(b, 'GET', '/tickets', undefined, second)).status).toBe(200);
    expect((await direct(c, 'GET', '/tickets', undefined, second)).status).toBe(200);
    expect((await direct(a, 'DELETE', `/_ninefold/keys/${issued.body.id}`)).status).toBe(204);
    expect((await direct(b, 'GET', '/tickets', undefined, second)).status).toBe(401);
    expect((await direct(c, 'GET', '/tickets', undefined, second)).status).toBe(401);
  });
});
