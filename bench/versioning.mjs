// GET by id in the oldest of three versions (two renames between) against the same GET in the newest, same run:
// `node bench/versioning.mjs` (needs wrk). One server process on a fresh SQLite file, one record, lines
// interleaved ROUNDS times for DURATION seconds each. Issue 19's goal: oldest >= 0.9x newest. Prints the figures
// only; record them in bench/RESULTS.md from a quiet machine.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = new URL('..', import.meta.url).pathname;
const PORT = Number(process.env.PORT ?? 18291);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const DURATION = Number(process.env.DURATION ?? 5);
const base = `http://127.0.0.1:${PORT}`;
const db = join(mkdtempSync(join(tmpdir(), 'ninefold-versions.')), 'bench.db');

const server = spawn(
  process.execPath,
  [
    join(ROOT, 'bin/ninefold.js'),
    'serve',
    join(ROOT, 'bench/versions.yaml'),
    '--port',
    String(PORT),
    '--db',
    db,
    '--log-level',
    'warn',
  ],
  { stdio: ['ignore', 'inherit', 'inherit'] },
);
const ready = async () => {
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(`${base}/healthz`)).ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the server did not start');
};
try {
  await ready();
  const made = await fetch(`${base}/persons`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'api-version': '2026-01-15' },
    body: JSON.stringify({ name: 'Ada Lovelace', email: 'ada@example.com', age: 36 }),
  });
  const { id } = await made.json();
  const lines = [
    { label: 'GET /persons/{id} in the newest (2026-09-01)', version: '2026-09-01' },
    { label: 'GET /persons/{id} in the oldest (2026-01-15)', version: '2026-01-15' },
  ];
  const results = new Map(lines.map((l) => [l.label, []]));
  for (let round = 0; round < ROUNDS; round++)
    for (const line of lines) {
      const out = spawnSync(
        'wrk',
        ['-t1', '-c32', `-d${DURATION}s`, '-H', `api-version: ${line.version}`, `${base}/persons/${id}`],
        { encoding: 'utf8' },
      ).stdout;
      const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out ?? '')?.[1] ?? Number.NaN);
      results.get(line.label).push(rps);
    }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const [newest, oldest] = lines.map((l) => median(results.get(l.label)));
  for (const line of lines)
    console.log(`${line.label}: ${median(results.get(line.label)).toFixed(0)} req/s (median of ${ROUNDS})`);
  console.log(`oldest / newest: ${(oldest / newest).toFixed(2)} (goal >= 0.90)`);
} finally {
  server.kill('SIGTERM');
}
