// node bench/slowloris.mjs — RELIABILITY L9: legitimate traffic keeps its p99 while slow clients hold connections.
// Serves bench/items.yaml (dist/, built with `npx tsc -p tsconfig.json`), then measures GET /items/{id} with
// autocannon twice, the same way: alone, and while ATTACKERS connections trickle a header byte every TRICKLE_MS
// (ATTACK=headers, slowloris) or a body byte (ATTACK=body, R.U.D.Y.), each reopened as soon as the server cuts it.
// Prints one JSON line: p50/p99 of both runs, how many slow connections the server cut (408) and how long they
// lasted, and the server's open file descriptors at the end of the attack.
//
// env (defaults): ATTACKERS=1000 TRICKLE_MS=10000 ATTACK=headers DURATION=30 CONNS=20
//                 HEADERS_TIMEOUT=20s BODY_TIMEOUT=30s (written into the spec's limits.timeouts)
// The server and this script each hold ATTACKERS sockets: raise `ulimit -n` above 1024 first (ulimit -n 4096).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const env = process.env;
const ATTACKERS = Number(env.ATTACKERS ?? 1000);
const TRICKLE_MS = Number(env.TRICKLE_MS ?? 10_000);
const ATTACK = env.ATTACK ?? 'headers';
const DURATION = Number(env.DURATION ?? 30);
const CONNS = Number(env.CONNS ?? 20);
const PORT = 18500 + Math.floor(Math.random() * 400);
const log = (...a) => process.stderr.write(`[slowloris] ${a.join(' ')}\n`);

if (!existsSync(join(ROOT, 'dist/cli/main.js'))) throw new Error('dist/ missing: run npx tsc -p tsconfig.json');
const work = mkdtempSync(join(tmpdir(), 'ninefold-slowloris-'));
const spec = `${readFileSync(join(ROOT, 'bench/items.yaml'), 'utf8')}
limits:
  timeouts: { headers: ${env.HEADERS_TIMEOUT ?? '20s'}, body: ${env.BODY_TIMEOUT ?? '30s'} }
`;
writeFileSync(join(work, 'items.yaml'), spec);
const server = spawn(
  process.execPath,
  [
    join(ROOT, 'bin/ninefold.js'),
    'serve',
    join(work, 'items.yaml'),
    '--port',
    String(PORT),
    '--db',
    join(work, 'db'),
    '--log-level',
    'warn',
  ],
  { stdio: ['ignore', 'ignore', 'inherit'] },
);
const base = `http://127.0.0.1:${PORT}`;
for (;;) {
  try {
    if ((await fetch(`${base}/healthz`)).ok) break;
  } catch {}
  await new Promise((r) => setTimeout(r, 100));
}
const ids = [];
for (let i = 0; i < 100; i++) {
  const r = await fetch(`${base}/items`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: `item ${i}`, price: i }),
  });
  ids.push((await r.json()).id);
}

const measure = () =>
  new Promise((done, fail) => {
    let n = 0;
    autocannon(
      {
        url: base,
        connections: CONNS,
        duration: DURATION,
        requests: [{ setupRequest: (req) => ({ ...req, path: `/items/${ids[n++ % ids.length]}` }) }],
      },
      (error, result) => (error ? fail(error) : done(result)),
    );
  });
const summary = (r) => ({
  rps: Math.round(r.requests.average),
  p50: r.latency.p50,
  p99: r.latency.p99,
  non2xx: r.non2xx,
  errors: r.errors,
});

// A slow connection can be cut only once its time-out has passed: an attack shorter than that measures no cut.
const cutAfterMs = (() => {
  const text = ATTACK === 'body' ? (env.BODY_TIMEOUT ?? '30s') : (env.HEADERS_TIMEOUT ?? '20s');
  const m = /^(\d+)(ms|s|min)$/.exec(text);
  return m ? Number(m[1]) * { ms: 1, s: 1000, min: 60_000 }[m[2]] : 0;
})();
if ((DURATION + 1) * 1000 <= cutAfterMs)
  log(
    `note: the attack lasts ${DURATION + 1} s and slow ${ATTACK} are cut after ${cutAfterMs / 1000} s: none will be;`,
    `raise DURATION or lower ${ATTACK === 'body' ? 'BODY_TIMEOUT' : 'HEADERS_TIMEOUT'} to measure the cut`,
  );
log(`baseline: ${DURATION} s of GET /items/{id} over ${CONNS} connections`);
const alone = summary(await measure());

// The attack: every slow connection reopens as soon as the server closes it.
const cut = { count: 0, with408: 0, lifetimes: [] };
const sockets = new Set();
let attacking = true;
const open = () => {
  if (!attacking) return;
  const socket = connect(PORT, '127.0.0.1');
  const opened = performance.now();
  let answer = '';
  sockets.add(socket);
  socket.on('connect', () => {
    socket.write(
      ATTACK === 'body'
        ? `POST /items HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`
        : `GET /items/${ids[0]} HTTP/1.1\r\nHost: x\r\n`,
    );
    socket.started = true;
  });
  socket.on('data', (c) => {
    answer += c.toString('latin1');
  });
  socket.on('error', () => {});
  socket.on('close', () => {
    sockets.delete(socket);
    if (!attacking) return;
    cut.count++;
    if (answer.startsWith('HTTP/1.1 408')) cut.with408++;
    else if (env.DEBUG)
      log('cut without 408:', Math.round(performance.now() - opened), JSON.stringify(answer.slice(0, 40)));
    cut.lifetimes.push(performance.now() - opened);
    setImmediate(open);
  });
};
for (let i = 0; i < ATTACKERS; i++) open();
const trickle = setInterval(() => {
  // Only sockets whose request line went out: a byte written before it would make a malformed request (400).
  for (const s of sockets) if (s.started && !s.destroyed) s.write(ATTACK === 'body' ? ' ' : 'X');
}, TRICKLE_MS);
await new Promise((r) => setTimeout(r, 1000));
log(`attack: ${ATTACKERS} slow ${ATTACK} connections, one byte every ${TRICKLE_MS} ms; measuring again`);
const attacked = summary(await measure());
const fds = readdirSync(`/proc/${server.pid}/fd`).length;
attacking = false;
clearInterval(trickle);
for (const s of sockets) s.destroy();
server.kill('SIGTERM');
await new Promise((r) => server.once('exit', r));
rmSync(work, { recursive: true, force: true });

const lifetimes = cut.lifetimes.sort((a, b) => a - b);
const at = (q) => Math.round(lifetimes[Math.min(lifetimes.length - 1, Math.floor(q * lifetimes.length))] ?? 0);
process.stdout.write(
  `${JSON.stringify({
    attack: ATTACK,
    attackers: ATTACKERS,
    trickleMs: TRICKLE_MS,
    alone,
    attacked,
    p99Ratio: Math.round((attacked.p99 / Math.max(alone.p99, 1)) * 100) / 100,
    slowCut: { count: cut.count, with408: cut.with408, lifetimeMs: { min: at(0), p50: at(0.5), max: at(1) } },
    serverFds: fds,
  })}\n`,
);
