// Commit-to-receipt latency of one webhook endpoint on PostgreSQL at a steady create rate, outside the full bench:
// a fresh schema, the receiver (bench/receiver.mjs), a Ninefold server on items-events.yaml, one endpoint, then
// bench/paced.mjs. The server's stderr is passed through (NF_TRACE=1 on an instrumented build prints per-second
// stage timings). PRE=<n> first subscribes an endpoint, creates n items flat out and deletes it (as the bench does
// before its paced phase).
// Run: node bench/webhook-latency.mjs [rate=1000] [seconds=5]
import { execFileSync, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const BENCH = dirname(fileURLToPath(import.meta.url));
const ROOT = join(BENCH, '..');
const rate = process.argv[2] ?? '1000';
const seconds = process.argv[3] ?? '5';
const PG = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `h31_lat_${process.pid}`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const RPORT = 18431;
const SPORT = 18291;
const admin = new pg.Client({ connectionString: PG });
await admin.connect();
await admin.query(`CREATE SCHEMA ${schema}`);
const receiver = spawn(process.execPath, [join(BENCH, 'receiver.mjs'), String(RPORT)], { stdio: 'inherit' });
// SERVER_CPU=<n> pins the server to that core (taskset), as the bench does; run the script itself pinned elsewhere.
const pin = process.env.SERVER_CPU;
const server = spawn(
  pin ? 'taskset' : process.execPath,
  [
    ...(pin ? ['-c', pin, process.execPath] : []),
    join(ROOT, 'bin/ninefold.js'),
    'serve',
    join(BENCH, 'items-events.yaml'),
    '--port',
    String(SPORT),
    '--db',
    `${PG}?schema=${schema}`,
    '--log-level',
    'warn',
  ],
  { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env } },
);
const base = `http://127.0.0.1:${SPORT}`;
try {
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(`${base}/healthz`)).ok) break;
    } catch {}
    await sleep(100);
  }
  const subscribe = async (path) => {
    const made = await fetch(`${base}/webhook-endpoints`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: `http://127.0.0.1:${RPORT}${path}` }),
    });
    const { id, secret } = await made.json();
    await fetch(`http://127.0.0.1:${RPORT}/secret`, { method: 'POST', body: secret });
    return id;
  };
  const body = JSON.stringify({ name: 'bench item', price: 9.5, tags: ['a', 'b'] });
  if (process.env.PRE) {
    const first = await subscribe('/first');
    await sleep(2500);
    execFileSync(process.execPath, [
      join(BENCH, 'paced.mjs'),
      `${base}/items`,
      '3000',
      String(Number(process.env.PRE) / 3000),
      body,
    ]);
    await sleep(3000);
    await fetch(`${base}/webhook-endpoints/${first}`, { method: 'DELETE' });
  }
  await subscribe('/paced');
  await sleep(2500);
  await fetch(`http://127.0.0.1:${RPORT}/reset`);
  const stat = (pid) => {
    const f = execFileSync('cat', [`/proc/${pid}/stat`], { encoding: 'utf8' })
      .split(') ')[1]
      .split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  };
  const cpu0 = stat(server.pid);
  const t0 = new Date().toISOString();
  const paced = JSON.parse(
    execFileSync(process.execPath, [join(BENCH, 'paced.mjs'), `${base}/items`, rate, seconds, body], {
      encoding: 'utf8',
    }),
  );
  await sleep(1000);
  const stats = await (await fetch(`http://127.0.0.1:${RPORT}/stats`)).json();
  const cpu = stat(server.pid) - cpu0;
  console.log(
    JSON.stringify({
      at: t0,
      paced,
      received: stats.count,
      p50: stats.p50,
      p99: stats.p99,
      serverCpuS: cpu,
      cpuUsPerItem: (cpu * 1e6) / paced.sent,
    }),
  );
} finally {
  server.kill('SIGTERM');
  receiver.kill('SIGTERM');
  await sleep(500);
  await admin.query(`DROP SCHEMA ${schema} CASCADE`);
  await admin.end();
}
