// CPU time per request, Ninefold on PostgreSQL against the hand-written Fastify + node-postgres server
// (bench/baseline-fastify-pg.mjs), for GET by id, POST, list, transition and POST with one webhook. Each server
// answers a fixed number of requests at a fixed concurrency (autocannon `amount`); the server's own CPU time
// (/proc/<pid>/stat utime + stime) over those requests, divided by their count, is less sensitive to the
// neighbours' load than req/s (the same build against itself: within about 10%).
// Run after `npx tsc -p tsconfig.json` (or `npm run build`).
//
// env (defaults): N=3000 (measured requests per line) WARM=600 CONNS=20 ITEMS=2000 ROUNDS=1
//                 LINES=get,post,list,transition,post-hook (and post-events, not by default) PG_URL=postgres://postgres@127.0.0.1:5432/test
//                 NF_B=<another checkout's bin/ninefold.js> (compare two builds of Ninefold, in place of the hand-written)
//                 PROF=<dir> (the servers run under `node --cpu-prof --cpu-prof-dir=<dir>`)
//                 STRACE=<dir> (`strace -c -f` on each server over the measured requests, written to <dir>;
//                 with STRACE_WIRE=1 the socket writes and reads themselves, to see the statements and their round trips)
//                 CALLGRIND=<dir> (each server runs under `valgrind --tool=callgrind`, its counters zeroed after the
//                 warm-up and dumped after the measured requests into <dir>: instructions per request, whatever the load;
//                 node runs --single-threaded there)
//                 RATE=<req/s> (the requests at this rate, all connections together, instead of as fast as answered)
//                 PG_CPU=1 (also the CPU of the server's PostgreSQL backends over the measured requests: the
//                 server connects with PGAPPNAME=bench-<server>-<port>, its backends are found in pg_stat_activity and
//                 their /proc/<pid>/stat read; PostgreSQL's shared background processes are not counted)
//                 PORT=18420 (Ninefold listens on PORT, the other server on PORT+1, the webhook receiver on PORT-19:
//                 two runs side by side need two PORTs)
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { openPgData } from './pg-data.mjs';

const BENCH = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(BENCH, '..');
const env = process.env;
const N = Number(env.N ?? 3000);
const WARM = Number(env.WARM ?? 600);
const CONNS = Number(env.CONNS ?? 20);
const ITEMS = Number(env.ITEMS ?? 2000);
const ROUNDS = Number(env.ROUNDS ?? 1);
const PG_URL = env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const WANTED = (env.LINES ?? 'get,post,list,transition,post-hook').split(',');
const PORT = Number(env.PORT ?? 18420);
const RECEIVER_PORT = PORT - 19;
const TICK_US = 1e6 / 100; // USER_HZ: /proc/<pid>/stat counts in clock ticks of 10 ms
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const { checkFile } = await import(join(ROOT, 'dist/spec/check.js'));
const { buildPlan } = await import(join(ROOT, 'dist/plan/build-plan.js'));
const { monotonicFactory } = await import('ulid');
const planFor = async (file) => {
  const c = await checkFile(join(BENCH, file));
  if (!c.spec) throw new Error(`${file} does not check`);
  return buildPlan(c.spec, c.dir);
};
const plans = { 'items.yaml': await planFor('items.yaml'), 'items-events.yaml': await planFor('items-events.yaml') };

// ------------------------------------------------------------------ data: the same rows for both servers
const at = (i) => new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString();
const items = Array.from({ length: ITEMS }, (_, k) => ({
  id: k + 1,
  name: `item ${k + 1}`,
  price: Math.round(((k + 1) * 137) % 100000) / 100,
  tags: [`t${(k + 1) % 10}`],
  createdAt: at(k + 1),
}));
const orderCount = WARM + N + CONNS;
const orders = Array.from({ length: orderCount }, (_, k) => ({ id: k + 1, note: `order ${k + 1}`, createdAt: at(k) }));
const ulid = monotonicFactory();
const nfItems = items.map((it) => ({
  ...it,
  id: ulid(Date.parse(it.createdAt)),
  updatedAt: it.createdAt,
  revision: 1,
}));
const nfOrders = orders.map((o) => ({
  id: ulid(Date.parse(o.createdAt)),
  note: o.note,
  status: 'cart',
  createdAt: o.createdAt,
  updatedAt: o.createdAt,
  revision: 1,
}));
const pgData = await openPgData(PG_URL, ROOT);
await pgData.seed({ plan: plans['items.yaml'], items, orders, nfItems, nfOrders });

// ------------------------------------------------------------------ servers
const cpuTicks = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return { user: Number(fields[11]), sys: Number(fields[12]) };
};
const start = async (server, port, db, spec) => {
  const prof = env.PROF
    ? [
        '--cpu-prof',
        `--cpu-prof-dir=${env.PROF}`,
        '--require',
        join(BENCH, 'exit-on-term.cjs'),
        `--cpu-prof-name=${server}-${spec}-${port}-${Date.now()}.cpuprofile`,
      ]
    : [];
  const args =
    server !== 'fx'
      ? [
          ...prof,
          server === 'nfB' ? env.NF_B : join(ROOT, 'bin/ninefold.js'),
          'serve',
          join(BENCH, spec),
          '--port',
          String(port),
        ]
      : [...prof, join(BENCH, 'baseline-fastify-pg.mjs')];
  if (server !== 'fx') args.push('--db', db, '--log-level', 'warn');
  const grind = env.CALLGRIND
    ? [
        'valgrind',
        '--tool=callgrind',
        '--instr-atstart=yes',
        `--callgrind-out-file=${env.CALLGRIND}/${server}-${spec}-${port}.%p.out`,
        process.execPath,
        // Compilation and GC on the main thread, when their work is due, not when a helper thread gets to it: the
        // same requests then count the same instructions.
        '--single-threaded',
      ]
    : [process.execPath];
  const child = spawn(grind[0], [...grind.slice(1), ...args], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...env, PORT: String(port), DB: db, PGAPPNAME: `bench-${server}-${port}` },
  });
  const probe = `http://127.0.0.1:${port}${server !== 'fx' ? '/healthz' : '/items/1'}`;
  for (let i = 0; i < (env.CALLGRIND ? 3000 : 300); i++) {
    try {
      if ((await fetch(probe)).status < 500) return child;
    } catch {}
    await sleep(100);
  }
  throw new Error(`${server} did not start`);
};
const callgrindControl = (flag, pid) =>
  new Promise((ok, fail) => {
    const c = spawn('callgrind_control', [flag, String(pid)], { stdio: 'ignore' });
    c.once('exit', (code) => (code === 0 ? ok() : fail(new Error(`callgrind_control ${flag}: ${code}`))));
  });
/** CPU ticks of every PostgreSQL backend the server has open, by pid. */
const pgTicks = async (server, port) => {
  if (!env.PG_CPU) return new Map();
  const pids = await pgData.backends(`bench-${server}-${port}`);
  const out = new Map();
  for (const pid of pids) {
    try {
      const t = cpuTicks(pid);
      out.set(pid, t.user + t.sys);
    } catch {}
  }
  return out;
};
const pgSpent = (before, after) => {
  let ticks = 0;
  for (const [pid, t] of after) ticks += t - (before.get(pid) ?? 0);
  return ticks;
};
const stop = async (child) => {
  const gone = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await gone;
};

/** `amount` requests; `path(i)` gives the i-th request's path. Resolves with non-2xx count. */
const fire = (port, line, amount, path) =>
  new Promise((ok, fail) => {
    let i = 0;
    const instance = autocannon(
      {
        url: `http://127.0.0.1:${port}`,
        connections: CONNS,
        amount,
        ...(env.RATE ? { overallRate: Number(env.RATE) } : {}),
        requests: [
          {
            method: line.method,
            body: line.body,
            headers: line.body ? { 'content-type': 'application/json' } : {},
            setupRequest: (req) => ({ ...req, path: path(i++) }),
          },
        ],
      },
      (error, result) => (error ? fail(error) : ok(result.non2xx + result.errors)),
    );
    instance.on('error', fail);
  });

const POST_BODY = '{"name":"widget","price":9.99,"tags":["a","b"]}';
const LINES = {
  get: { method: 'GET', path: (ids, i) => `/items/${ids.items[i % ids.items.length]}` },
  post: { method: 'POST', body: POST_BODY, path: () => '/items' },
  list: {
    method: 'GET',
    path: (_ids, i, server) => `/items?limit=20&price${server === 'fx' ? '_gte' : '[gte]'}=${(i * 7) % 900}`,
  },
  transition: { method: 'POST', body: '{}', path: (ids, i) => `/orders/${ids.orders[i]}/place` },
  'post-hook': { method: 'POST', body: POST_BODY, path: () => '/items', webhook: true, only: 'nf' },
  // The outbox alone: events on, no endpoint subscribed (what the event row and its sequencing cost a create).
  'post-events': { method: 'POST', body: POST_BODY, path: () => '/items', events: true, only: 'nf' },
};
const idsOf = (server) =>
  server !== 'fx'
    ? { items: nfItems.map((r) => r.id), orders: nfOrders.map((r) => r.id) }
    : { items: items.map((r) => r.id), orders: orders.map((r) => r.id) };

/** One server, one line: CPU µs per measured request (and, with a webhook, µs per request until all delivered). */
const measure = async (server, name, round) => {
  const line = LINES[name];
  const spec = line.webhook || line.events ? 'items-events.yaml' : 'items.yaml';
  const { url } = await pgData.fresh(server === 'fx' ? 'fx' : 'nf', `cpu_${name}_${server}_${round}`, plans[spec]);
  const port = server === 'nf' ? PORT : PORT + 1;
  let receiver;
  if (line.webhook) {
    receiver = spawn(process.execPath, [join(BENCH, 'receiver.mjs'), String(RECEIVER_PORT)], { stdio: 'ignore' });
    await sleep(300);
  }
  const child = await start(server, port, url, spec);
  try {
    if (line.webhook) {
      const made = await fetch(`http://127.0.0.1:${port}/webhook-endpoints`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ url: `http://127.0.0.1:${RECEIVER_PORT}/hook` }),
      });
      if (made.status !== 201) throw new Error(`webhook endpoint: ${made.status}`);
    }
    const ids = idsOf(server);
    const bad0 = await fire(port, line, WARM, (i) => line.path(ids, i, server));
    const strace = env.STRACE
      ? spawn('strace', [
          // STRACE_WIRE=1: every socket write and read with its first 600 bytes (the statements and their batching).
          ...(env.STRACE_WIRE ? ['-s', '600', '-e', 'trace=writev,write,read'] : ['-c']),
          '-f',
          '-o',
          `${env.STRACE}/${name}-${server}.txt`,
          '-p',
          String(child.pid),
        ])
      : undefined;
    if (strace) await sleep(500);
    if (env.CALLGRIND) await callgrindControl('-z', child.pid);
    const p0 = await pgTicks(server, port);
    if (env.COUNT_DIR) child.kill('SIGUSR2');
    const t0 = cpuTicks(child.pid);
    const w0 = performance.now();
    const bad = await fire(port, line, N, (i) => line.path(ids, WARM + i, server));
    const t1 = cpuTicks(child.pid);
    const rps = (N * 1000) / (performance.now() - w0);
    if (env.COUNT_DIR) child.kill('SIGUSR2');
    const p1 = await pgTicks(server, port);
    if (env.CALLGRIND) await callgrindControl('-d', child.pid);
    if (strace) {
      strace.kill('SIGINT');
      await new Promise((r) => strace.once('exit', r));
    }
    const out = {
      us: ((t1.user + t1.sys - t0.user - t0.sys) * TICK_US) / N,
      sys: ((t1.sys - t0.sys) * TICK_US) / N,
      bad: bad0 + bad,
      pg: (pgSpent(p0, p1) * TICK_US) / N,
      rps,
    };
    if (line.webhook) {
      const stats = async () => (await (await fetch(`http://127.0.0.1:${RECEIVER_PORT}/stats`)).json()).count;
      for (let i = 0; i < 600 && (await stats()) < WARM + N; i++) await sleep(100);
      out.delivered = await stats();
      const t2 = cpuTicks(child.pid);
      out.usDelivered = ((t2.user + t2.sys - t0.user - t0.sys) * TICK_US) / N;
    }
    return out;
  } finally {
    await stop(child);
    if (receiver) receiver.kill('SIGTERM');
  }
};

const fmt = (n) => (Number.isFinite(n) ? n.toFixed(0) : 'n/a');
/** CPU per request, and the part of it spent in the kernel (system calls: sockets to PostgreSQL and the client). */
const cpu = (m) =>
  `${fmt(m.us)} µs/req (sys ${fmt(m.sys)}${env.PG_CPU ? `, PostgreSQL backends ${fmt(m.pg)}` : ''}; ${fmt(m.rps)} req/s)`;
try {
  for (let round = 1; round <= ROUNDS; round++) {
    for (const name of WANTED) {
      const nf = await measure('nf', name, round);
      if (env.NF_B) {
        const b = await measure('nfB', name, round);
        let text = `${name.padEnd(11)} ninefold ${cpu(nf)}, NF_B ${cpu(b)}, ratio ${(b.us / nf.us).toFixed(2)}, non-2xx ${nf.bad}/${b.bad}`;
        if (nf.delivered !== undefined)
          text += `; until delivered (${nf.delivered}/${b.delivered}): ninefold ${fmt(nf.usDelivered)}, NF_B ${fmt(b.usDelivered)} µs/req, ratio ${(b.usDelivered / nf.usDelivered).toFixed(2)}`;
        console.log(text);
        continue;
      }
      const fx = LINES[name].only ? undefined : await measure('fx', name, round);
      const refLine = fx ?? (await measure('fx', 'post', round));
      const ref = refLine.us;
      let text = `${name.padEnd(11)} ninefold ${cpu(nf)}, hand-written ${cpu(refLine)}${fx ? '' : ' (post)'}`;
      text += `, ratio (hand-written/ninefold) ${(ref / nf.us).toFixed(2)}, non-2xx ${nf.bad}/${fx?.bad ?? 0}`;
      if (nf.delivered !== undefined)
        text += `; delivered ${nf.delivered}, ${fmt(nf.usDelivered)} µs/req until delivered (${(ref / nf.usDelivered).toFixed(2)})`;
      console.log(text);
    }
  }
} finally {
  await pgData.close();
}
