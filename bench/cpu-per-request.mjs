// node bench/cpu-per-request.mjs — the server's CPU time per request (user + system, from /proc/<pid>/stat) for
// GET by id served, for GET by id under a rate limit never reached (bench/items-rate.yaml), the same with the rate
// counters in Redis, and for GET by id refused over its rate limit (bench/items-refused.yaml). CPU time suffers far
// less than throughput from other work on a loaded machine, so the ratio holds where req/s figures do not.
// Needs Linux (/proc) and a build (npm run build).
//
// env (defaults): REQUESTS=40000 CONNS=50 ROUNDS=3 WARMUP=5000 NINEFOLD_BIN=bin/ninefold.js (another build to compare)
// REDIS_URL=redis://127.0.0.1:6379 (the Redis line; REDIS_URL= to skip it)
// LINES=served,unmet,redis,refused (which lines to measure)
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';

const BENCH = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(BENCH, '..');
const REQUESTS = Number(process.env.REQUESTS ?? 40_000);
const CONNS = Number(process.env.CONNS ?? 50);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const WARMUP = Number(process.env.WARMUP ?? 5_000);
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const LINES = new Set((process.env.LINES ?? 'served,unmet,redis,refused').split(','));
const TICKS = 100; // USER_HZ: /proc counts CPU time in 1/100 s on Linux

const cpuMs = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  // utime and stime are fields 14 and 15 of the line; 12 and 13 after "pid (comm) ".
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS;
};

const serve = async (spec, port, db, env) => {
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
    { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, ...env } },
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

/** The Redis server's process id, when it runs on this machine: its CPU time is counted too. */
const redisPid = async (url) => {
  const redis = new Redis(url, { lazyConnect: true });
  try {
    await redis.connect();
    const pid = Number(/process_id:(\d+)/.exec(await redis.info('server'))?.[1]);
    return Number.isInteger(pid) && cpuMsOrNull(pid) !== null ? pid : undefined;
  } finally {
    redis.disconnect();
  }
};

const cpuMsOrNull = (pid) => {
  try {
    return cpuMs(pid);
  } catch {
    return null;
  }
};

const measure = async (line, name, spec, path, seed, env = {}) => {
  if (!LINES.has(line)) return undefined;
  const other = env.NINEFOLD_REDIS_URL ? await redisPid(env.NINEFOLD_REDIS_URL) : undefined;
  const dir = mkdtempSync(join(tmpdir(), 'nf-cpu.'));
  const port = 18300 + Math.floor(Math.random() * 500);
  const child = await serve(join(BENCH, spec), port, join(dir, 'items.db'), env);
  try {
    const id = seed ? await seed(port) : 'none';
    const url = `http://127.0.0.1:${port}${path.replace('{id}', id)}`;
    await load(url, WARMUP);
    const figures = [];
    const others = [];
    for (let round = 0; round < ROUNDS; round++) {
      const before = cpuMs(child.pid);
      const otherBefore = other ? cpuMs(other) : 0;
      const result = await load(url, REQUESTS);
      const used = cpuMs(child.pid) - before;
      if (other) others.push(((cpuMs(other) - otherBefore) * 1000) / REQUESTS);
      const statuses = Object.entries(result.statusCodeStats ?? {})
        .map(([code, s]) => `${code}:${s.count}`)
        .join(' ');
      figures.push((used * 1000) / REQUESTS);
      const redis = other ? `, Redis server ${others.at(-1).toFixed(1)} µs` : '';
      process.stderr.write(
        `${name} round ${round + 1}: ${figures.at(-1).toFixed(1)} µs/request${redis} (${statuses})\n`,
      );
    }
    const median = (list) => list.sort((a, b) => a - b)[Math.floor(list.length / 2)];
    if (other) redisServerUs = median(others);
    return median(figures);
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

let redisServerUs;
const served = await measure('served', 'GET served', 'items.yaml', '/items/{id}', createItem);
const limited = await measure('unmet', 'GET never reached', 'items-rate.yaml', '/items/{id}', createItem);
const redis = REDIS_URL
  ? await measure('redis', 'GET never reached, Redis', 'items-rate.yaml', '/items/{id}', createItem, {
      NINEFOLD_REDIS_URL: REDIS_URL,
    })
  : undefined;
const refused = await measure('refused', 'GET refused', 'items-refused.yaml', '/items/{id}', createItem);
const show = (label, figure) =>
  figure !== undefined && console.log(`${label} ${figure.toFixed(1)} µs CPU per request (median of ${ROUNDS})`);
const ratio = (label, figure, target) =>
  figure !== undefined && served !== undefined && console.log(`${label} ${(figure / served).toFixed(2)}x (${target})`);
show('GET by id served:       ', served);
show('GET by id, limit unmet: ', limited);
show('the same, Redis:        ', redis);
show('  and the Redis server: ', redisServerUs);
show('GET by id refused:      ', refused);
ratio('limit unmet / served:   ', limited, 'target <= 1.05x');
ratio('Redis / served:         ', redis, 'target <= 1.43x');
ratio('refused / served:       ', refused, 'target <= 0.5x');
