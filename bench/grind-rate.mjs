// node bench/grind-rate.mjs — instructions per request of GET by id, without limits (bench/items.yaml) and under a
// rate limit never reached (bench/items-rate.yaml), counted by callgrind on the server's main thread: unlike
// req/s or CPU time, the count does not move with the machine's load, so two builds compare on a busy host.
// Each server runs under `valgrind --tool=callgrind --single-threaded` (compilation and GC on the main thread, when
// due), takes WARM requests, has its counters zeroed, takes N more, and is dumped; the figure is total / N.
// Needs valgrind (callgrind_control) and a build (npm run build).
//
// env (defaults): BINS=bin/ninefold.js (comma-separated builds to compare, each a bin/ninefold.js)
// SPECS=items.yaml,items-rate.yaml  WARM=15000  N=4000  CONNS=20  KEEP= (a directory to keep the callgrind files in)
// TIMEOUT=10 (seconds autocannon waits for an answer: raise it on a loaded host, where valgrind's server is slow)
// PORT= (the servers' port; by default one picked at random from 18900-18989)
// NODE_FLAGS (node flags; by default a fixed young generation and a large first old generation, so that scavenges
// come at the same rate in every run and no mark-compact falls into the window: one moved a figure by 30 % here;
// and no memory reducer, whose timer (slow under valgrind) started incremental marking 10,000 requests in, at 10-50k
// instructions a request;
// add --perf-basic-prof to name the JIT code of KEEP's files from /tmp/perf-<pid>.map)
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const BENCH = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(BENCH, '..');
const env = process.env;
const BINS = (env.BINS ?? join(ROOT, 'bin/ninefold.js')).split(',');
const SPECS = (env.SPECS ?? 'items.yaml,items-rate.yaml').split(',');
// The window (requests 15,001-19,000) is past the in-process counters' first sweep (decision 10,000: `take` deopts
// there once and is compiled again) and before their second, and past most of TurboFan's compiling.
const WARM = Number(env.WARM ?? 15000);
const N = Number(env.N ?? 4000);
const CONNS = Number(env.CONNS ?? 20);
const TIMEOUT = Number(env.TIMEOUT ?? 10);
const HEAP_FLAGS = '--min-semi-space-size=16 --max-semi-space-size=16 --initial-old-space-size=512 --no-memory-reducer';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const control = (flag, pid) =>
  new Promise((ok, fail) => {
    const c = spawn('callgrind_control', [flag, String(pid)], { stdio: 'ignore' });
    c.once('exit', (code) => (code === 0 ? ok() : fail(new Error(`callgrind_control ${flag}: ${code}`))));
  });

const load = (url, amount) =>
  new Promise((done, fail) =>
    autocannon({ url, connections: CONNS, amount, timeout: TIMEOUT }, (error, result) =>
      error ? fail(error) : done(result),
    ),
  );

/** The instructions of the last dump in `dir`: its `totals:` (or `summary:`) line. */
const lastDump = (dir, prefix) => {
  const files = readdirSync(dir)
    .filter((f) => f.startsWith(prefix) && /\.out\.\d+$/.test(f))
    .sort((a, b) => Number(a.split('.').at(-1)) - Number(b.split('.').at(-1)));
  const text = readFileSync(join(dir, files.at(-1)), 'utf8');
  const m = /^(?:totals|summary): (\d+)/m.exec(text);
  return Number(m?.[1]);
};

const grind = async (bin, spec, port) => {
  const dir = env.KEEP ? resolve(env.KEEP) : mkdtempSync(join(tmpdir(), 'nf-grind.'));
  const db = join(mkdtempSync(join(tmpdir(), 'nf-grind-db.')), 'items.db');
  const child = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      '--instr-atstart=yes',
      `--callgrind-out-file=${dir}/${spec}-${port}.%p.out`,
      process.execPath,
      '--single-threaded',
      ...(env.NODE_FLAGS ?? HEAP_FLAGS).split(' ').filter(Boolean),
      bin,
      'serve',
      join(BENCH, spec),
      '--port',
      String(port),
      '--db',
      db,
      '--log-level',
      'warn',
    ],
    { stdio: ['ignore', 'ignore', 'inherit'], cwd: dir },
  );
  try {
    for (let i = 0; ; i++) {
      try {
        await fetch(`http://127.0.0.1:${port}/healthz`);
        break;
      } catch {
        if (i > 12000) throw new Error('the server did not start');
        await sleep(100);
      }
    }
    const created = await fetch(`http://127.0.0.1:${port}/items`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"name":"widget","price":9.99,"tags":["a","b"]}',
    });
    const url = `http://127.0.0.1:${port}/items/${(await created.json()).id}`;
    await load(url, WARM);
    await control('-z', child.pid);
    const result = await load(url, N);
    await control('-d', child.pid);
    const ok = result['2xx'];
    if (ok !== N) throw new Error(`${spec}: ${ok} of ${N} answers were 2xx`);
    // The dump is written by the server's thread once it next runs: wait for it.
    for (let i = 0; i < 600; i++) {
      try {
        const total = lastDump(dir, `${spec}-${port}.${child.pid}.`);
        if (total > 0) return total / N;
      } catch {}
      await sleep(100);
    }
    throw new Error('no dump');
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    if (!env.KEEP) rmSync(dir, { recursive: true, force: true });
    rmSync(dirname(db), { recursive: true, force: true });
  }
};

const port = env.PORT ? Number(env.PORT) : 18900 + Math.floor(Math.random() * 90);
for (const bin of BINS) {
  const figures = [];
  for (const spec of SPECS) {
    figures.push(await grind(bin, spec, port));
    console.log(`${bin} ${spec}: ${Math.round(figures.at(-1))} instructions/request`);
  }
  if (figures.length === 2) console.log(`${bin}: ${SPECS[1]} / ${SPECS[0]} = ${(figures[1] / figures[0]).toFixed(3)}`);
}
