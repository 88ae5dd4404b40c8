// node bench/cpu-per-request.mjs — the server's CPU time per request (user + system, from /proc/<pid>/stat) for
// GET by id served, for GET by id under a rate limit never reached (bench/items-rate.yaml), and for GET by id
// refused over its rate limit (bench/items-refused.yaml). CPU time suffers far
// less than throughput from other work on a loaded machine, so the ratio holds where req/s figures do not.
// Needs Linux (/proc) and a build (npm run build).
//
// env (defaults): REQUESTS=40000 CONNS=50 ROUNDS=3 WARMUP=5000 NINEFOLD_BIN=bin/ninefold.js (another build to compare)
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const BENCH = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(BENCH, '..');
const REQUESTS = Number(process.env.REQUESTS ?? 40_000);
const CONNS = Number(process.env.CONNS ?? 50);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const WARMUP = Number(process.env.WARMUP ?? 5_000);
const TICKS = 100; // USER_HZ: /proc counts CPU time in 1/100 s on Linux

const cpuMs = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  // utime and stime are fields 14 and 15 of the line; 12 and 13 after "pid (comm) ".
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS;
};

const serve = async (spec, port, db) => {
  const child = spawn(
    process.execPath,
    [
      process.env.NINEFOLD_BIN ?? join(ROOT, 'bin/ninefold.js'),
      'serve',
      spec,
      '--port',
      String(port),
      '--db',
      db,
      '--log-level',
      'warn',
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  for (;;) {
    try {
      await fetch(`http://127.0.0.1:${port}/healthz`);
      return child;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
};

const load = (url, amount) =>
  new Promise((done, fail) =>
    autocannon({ url, connections: CONNS, amount }, (error, result) => (error ? fail(error) : done(result))),
  );

const measure = async (name, spec, path, seed) => {
  const dir = mkdtempSync(join(tmpdir(), 'nf-cpu.'));
  const port = 18300 + Math.floor(Math.random() * 500);
  const child = await serve(join(BENCH, spec), port, join(dir, 'items.db'));
  try {
    const id = seed ? await seed(port) : 'none';
    const url = `http://127.0.0.1:${port}${path.replace('{id}', id)}`;
    await load(url, WARMUP);
    const figures = [];
    for (let round = 0; round < ROUNDS; round++) {
      const before = cpuMs(child.pid);
      const result = await load(url, REQUESTS);
      const used = cpuMs(child.pid) - before;
      const statuses = Object.entries(result.statusCodeStats ?? {})
        .map(([code, s]) => `${code}:${s.count}`)
        .join(' ');
      figures.push((used * 1000) / REQUESTS);
      process.stderr.write(`${name} round ${round + 1}: ${figures.at(-1).toFixed(1)} µs/request (${statuses})\n`);
    }
    return figures.sort((a, b) => a - b)[Math.floor(figures.length / 2)];
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
  }
};

const createItem = async (port) => {
  const res = await fetch(`http://127.0.0.1:${port}/items`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"name":"widget","price":9.99,"tags":["a","b"]}',
  });
  return (await res.json()).id;
};

const served = await measure('GET served', 'items.yaml', '/items/{id}', createItem);
const limited = await measure('GET never reached', 'items-rate.yaml', '/items/{id}', createItem);
const refused = await measure('GET refused', 'items-refused.yaml', '/items/{id}', createItem);
console.log(`GET by id served:        ${served.toFixed(1)} µs CPU per request (median of ${ROUNDS})`);
console.log(`GET by id, limit unmet:  ${limited.toFixed(1)} µs CPU per request (median of ${ROUNDS})`);
console.log(`GET by id refused:       ${refused.toFixed(1)} µs CPU per request (median of ${ROUNDS})`);
console.log(`limit unmet / served:    ${(limited / served).toFixed(2)}x (target <= 1.05x)`);
console.log(`refused / served:        ${(refused / served).toFixed(2)}x (target <= 0.5x)`);
