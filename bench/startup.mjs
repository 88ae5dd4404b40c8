// Start-up bench: how long `ninefold serve` takes from process spawn to its first answer on /healthz, the CPU
// time it used until then (steadier than wall time on a busy machine), and its resident memory once idle.
// Usage: node bench/startup.mjs [spec] (default examples/orders/service.yaml, what `npm start` serves).
// Knobs: RUNS (7), NINEFOLD_ROOT (another checkout, for a before/after), IDLE_MS (2000: how long the server
// idles before RSS is read). dist/ must be built (npm run build). Each run has a fresh database.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

// NINEFOLD_ROOT measures another checkout (with its dist/ built), for a before/after.
const ROOT = resolve(process.env.NINEFOLD_ROOT ?? resolve(dirname(fileURLToPath(import.meta.url)), '..'));
const SPEC = process.argv[2] ?? 'examples/orders/service.yaml';
const RUNS = Number(process.env.RUNS ?? 7);
const IDLE_MS = Number(process.env.IDLE_MS ?? 2000);

const freePort = () =>
  new Promise((done) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => done(port));
    });
  });

const healthy = (port) =>
  new Promise((done) => {
    const req = request({ host: '127.0.0.1', port, path: '/healthz' }, (res) => {
      res.resume();
      done(res.statusCode === 200);
    });
    req.on('error', () => done(false));
    req.end();
  });

const rssMb = (pid) => {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
  return kb / 1024;
};

/** CPU time the process has used (user + system), from /proc/<pid>/stat, in ms: steadier than wall time on a busy machine. */
const cpuMs = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
};

const once = async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ninefold-startup-'));
  const port = await freePort();
  const started = performance.now();
  const child = spawn(
    process.execPath,
    ['bin/ninefold.js', 'serve', SPEC, '--port', String(port), '--db', join(dir, 'bench.db'), '--log-level', 'warn'],
    { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const exited = new Promise((done) => child.once('exit', done));
  try {
    while (!(await healthy(port))) {
      if (child.exitCode !== null) throw new Error(`ninefold serve exited with ${child.exitCode}`);
      await sleep(2);
    }
    const firstAnswerMs = performance.now() - started;
    const firstAnswerCpuMs = cpuMs(child.pid);
    await sleep(IDLE_MS);
    return { firstAnswerMs, firstAnswerCpuMs, rssMb: rssMb(child.pid) };
  } finally {
    child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
};

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

const runs = [];
for (let i = 0; i < RUNS; i++) {
  const run = await once();
  runs.push(run);
  console.log(
    `run ${i + 1}: first /healthz answer ${run.firstAnswerMs.toFixed(0)} ms (CPU ${run.firstAnswerCpuMs} ms), idle RSS ${run.rssMb.toFixed(1)} MB`,
  );
}
console.log(
  `${SPEC}: median of ${RUNS}: first answer ${median(runs.map((r) => r.firstAnswerMs)).toFixed(0)} ms ` +
    `(CPU ${median(runs.map((r) => r.firstAnswerCpuMs))} ms), ` +
    `idle RSS ${median(runs.map((r) => r.rssMb)).toFixed(1)} MB (node ${process.version})`,
);
