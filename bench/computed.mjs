// node bench/computed.mjs — what two per-caller computed fields cost a list of 20, on SQLite and on PostgreSQL.
//   on     Ninefold serving bench/computed.yaml: GET /articles?limit=20 with `favorited` (exists, a correlated
//          subquery in the page's own SELECT) and `favoritesCount` (count, a tally column the database keeps)
//   caller the same with a count that reads the caller (bench/computed-caller.yaml, favourites by others): the tally
//          less the caller's own, a second probe per row
//   off  the same server on bench/computed-off.yaml: the same tables and rows, no computed fields
// Both answer the same caller (an API key whose subject is a user with favourites). Lines are interleaved, every line
// once per round; each run is a fresh server process pinned to SERVER_CPU, wrk pinned to CLIENT_CPU, a warm-up
// discarded. Prints a Markdown table: median req/s per line and the median of the per-round ratios on/off.
//
// env (defaults): ROUNDS=3 DURATION=8 WARMUP=2 CONNS=50 SERVER_CPU=0 CLIENT_CPU=1 USERS=1000 ARTICLES=5000
//                 PG_URL=postgres://postgres@127.0.0.1:5432/test (PG=0 leaves PostgreSQL out) PORT=18470
//                 LINES=off,on,caller (which lines run) STORES=sqlite,pg (which stores' lines run)
//                 NF_BIN=<another checkout's bin/ninefold.js> serves every line (compare two builds)
//                 CPU=<n>: no throughput; each run answers a fixed n requests (autocannon, after n/4 to warm up) and
//                 the table shows the server's CPU per request only, which a shared machine disturbs far less
//                 PAIR=1: a store's lines side by side: their servers up together, the load alternating between
//                 them in SLICE-second slices (default 1) to DURATION seconds each; a line's figure is its median
//                 slice (the host's speed drifts ±15 % second to second on a shared VM; see bench/RESULTS.md)
//                 GRIND=<n>: instructions instead (whatever the load): each server runs under `valgrind
//                 --tool=callgrind` (node --single-threaded, so JIT and GC are counted where they happen), answers
//                 WARM requests (default 10000), its counters are zeroed, <n> more are counted; the table shows
//                 instructions per request and the ratio off/on per round. OUT=<dir> keeps the callgrind files.
//                 NODE_ARGS='--trace-gc' (node flags for the measured servers; with OUT, their output goes to
//                 OUT/<line>.log). A process whose scavenges each promote MBs (--trace-gc: `Scavenge 46 -> 35 MB`, 10-35 ms)
//                 costs 30-100 µs more per request; '--trace-gc --trace-pretenuring-statistics' names the allocation
//                 site V8 pretenured ("maybe tenure => tenure"), see bench/RESULTS.md (h/h32)
//                 PG_CPU=1 (with CPU=<n>: also the CPU of the server's PostgreSQL backends per request, as in
//                 bench/pg-cpu.mjs: the server connects with PGAPPNAME=bench-computed-<PORT>, its backends are found in
//                 pg_stat_activity and their /proc/<pid>/stat read; shared background processes are not counted)
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';

const BENCH = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(BENCH, '..');
const env = process.env;
const ROUNDS = Number(env.ROUNDS ?? 3);
const DURATION = Number(env.DURATION ?? 8);
const WARMUP = Number(env.WARMUP ?? 2);
const CONNS = Number(env.CONNS ?? 50);
const USERS = Number(env.USERS ?? 1000);
const ARTICLES = Number(env.ARTICLES ?? 5000);
const GRIND = Number(env.GRIND ?? 0);
const PAIR = env.PAIR === '1';
const SLICE = Number(env.SLICE ?? 1);
const CPU = GRIND || Number(env.CPU ?? 0);
const WARM = Number(env.WARM ?? 10000);
const OUT = env.OUT;
const NODE_ARGS = env.NODE_ARGS ? env.NODE_ARGS.split(' ') : [];
const PG_URL = env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const SERVER_CPU = env.SERVER_CPU ?? '0';
const CLIENT_CPU = env.CLIENT_CPU ?? '1';
const ON = join(BENCH, 'computed.yaml');
const OFF = join(BENCH, 'computed-off.yaml');
const CALLER = join(BENCH, 'computed-caller.yaml');
const log = (...a) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${a.join(' ')}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The whole build: tsc alone would leave bin/ninefold.js running the unbundled dist (slower to start).
execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
const { checkFile } = await import(join(ROOT, 'dist/spec/check.js'));
const { buildPlan } = await import(join(ROOT, 'dist/plan/build-plan.js'));
const { SqliteStore } = await import(join(ROOT, 'dist/storage/index.js'));
const { PostgresStore } = await import(join(ROOT, 'dist/storage/postgres/postgres-store.js'));
const { issueApiKey } = await import(join(ROOT, 'dist/parts/auth/keys.js'));
const { newId } = await import(join(ROOT, 'dist/parts/resources/record-io.js'));

const { spec, dir } = await checkFile(ON);
const plan = buildPlan(spec, dir);
const WORK = mkdtempSync(join(tmpdir(), 'nf-bench-computed-'));

/**
 * Users, articles (by user i mod USERS) and favourites: article i has (i mod 20) of them, from spread-out users;
 * the caller (user 0) favourites every third article.
 */
const rows = () => {
  const t0 = Date.parse('2026-01-01T00:00:00Z');
  const at = (i) => new Date(t0 + i * 1000).toISOString();
  const record = (resource, i, values) => ({
    id: newId(plan.resourcesByName.get(resource), t0 + i * 1000),
    createdAt: at(i),
    updatedAt: at(i),
    revision: 1,
    ...values,
  });
  const users = Array.from({ length: USERS }, (_, i) => record('User', i, { username: `user${i}` }));
  const articles = Array.from({ length: ARTICLES }, (_, i) =>
    record('Article', i, { title: `article ${i}`, author: users[i % USERS].id }),
  );
  const favorites = [];
  let n = 0;
  articles.forEach((a, i) => {
    const fans = new Set(Array.from({ length: i % 20 }, (_, k) => (i * 7 + k * 13 + 1) % USERS));
    if (i % 3 === 0) fans.add(0);
    for (const u of fans) favorites.push(record('Favorite', n++, { user: users[u].id, article: a.id }));
  });
  return { users, articles, favorites };
};
const data = rows();

const seed = async (store) => {
  await store.migrate(plan);
  for (const [resource, list] of [
    ['User', data.users],
    ['Article', data.articles],
    ['Favorite', data.favorites],
  ]) {
    for (let at = 0; at < list.length; at += 2000)
      await store.transaction(async () => {
        for (const row of list.slice(at, at + 2000)) await store.insert(resource, row);
      });
  }
  const key = (await issueApiKey(store, { subject: data.users[0].id, roles: [] })).key;
  await store.close();
  return key;
};

log(`seeding ${USERS} users, ${ARTICLES} articles, ${data.favorites.length} favourites`);
const sqlitePath = join(WORK, 'computed.db');
const targets = [{ store: 'sqlite', db: sqlitePath, key: await seed(new SqliteStore({ path: sqlitePath })) }];
const schema = `bench_computed_${process.pid}`;
const admin = new pg.Client({ connectionString: PG_URL });
if (env.PG !== '0') {
  await admin.connect();
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  const url = `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}schema=${schema}`;
  targets.push({ store: 'pg', db: url, key: await seed(new PostgresStore({ url })) });
  // What autovacuum would have done by now: statistics, and the visibility map index-only scans need.
  for (const table of ['user', 'article', 'favorite']) await admin.query(`VACUUM ANALYZE ${schema}."${table}"`);
}

const allLines = targets.flatMap((t) => [
  { ...t, computed: false, spec: OFF, label: `${t.store} list of 20, no computed fields` },
  { ...t, computed: true, spec: ON, label: `${t.store} list of 20 + favorited (exists) + favoritesCount (count)` },
  {
    ...t,
    computed: 'caller',
    spec: CALLER,
    label: `${t.store} list of 20 + favorited (exists) + favourites by others (count reading the caller)`,
  },
]);
// LINES=off,on (or caller): only those lines.
const lines = allLines.filter(
  (l) =>
    (!env.LINES || env.LINES.split(',').includes(l.computed === true ? 'on' : l.computed || 'off')) &&
    (!env.STORES || env.STORES.split(',').includes(l.store)),
);

const pinned = (cpu, cmd, args) => ['taskset', ['-c', cpu, cmd, ...args]];
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
/** CPU seconds a process has used (utime + stime); taskset execs the server, so its pid is the server's. */
const cpuSeconds = (pid) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / CLK_TCK;
};
/** The kernel's part of it (stime): a process's sends and wake-ups of its clients. */
const sysSeconds = (pid) => Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[12]) / CLK_TCK;
const PORT = Number(env.PORT ?? 18470);
const grindDir = GRIND ? (OUT ?? join(WORK, 'grind')) : undefined;
if (grindDir ?? OUT) mkdirSync(grindDir ?? OUT, { recursive: true });
const fileOf = (line) => `${line.store}-${line.computed === true ? 'on' : line.computed || 'off'}`;
const start = async (line, port = PORT) => {
  const logDir = grindDir ?? OUT;
  const out = openSync(
    NODE_ARGS.length && logDir ? join(logDir, `${fileOf(line)}.log`) : join(WORK, 'server.log'),
    'a',
  );
  const node = GRIND
    ? [
        'valgrind',
        [
          '--tool=callgrind',
          // Not counted while it starts and warms up (several times faster); switched on before the counted requests.
          '--instr-atstart=no',
          `--callgrind-out-file=${grindDir}/${fileOf(line)}.%p.out`,
          process.execPath,
          '--single-threaded',
          ...NODE_ARGS,
        ],
      ]
    : [process.execPath, NODE_ARGS];
  const [cmd, argv] = pinned(SERVER_CPU, node[0], [
    ...node[1],
    env.NF_BIN ?? join(ROOT, 'bin/ninefold.js'),
    'serve',
    line.spec,
    '--port',
    String(port),
    '--db',
    line.db,
    '--log-level',
    'warn',
  ]);
  const child = spawn(cmd, argv, {
    detached: true,
    stdio: ['ignore', out, out],
    env: { ...env, PGAPPNAME: `bench-computed-${port}` },
  });
  for (let i = 0; i < (GRIND ? 6000 : 600); i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) return child;
    } catch {}
    await sleep(50);
  }
  throw new Error(`server did not start:\n${readFileSync(join(WORK, 'server.log'), 'utf8').slice(-2000)}`);
};
const stop = async (child) => {
  const gone = new Promise((r) => child.once('exit', r));
  process.kill(-child.pid, 'SIGTERM');
  await gone;
};
const wrk = (line, seconds, port = PORT) => {
  const [cmd, argv] = pinned(CLIENT_CPU, 'wrk', [
    '-t1',
    `-c${CONNS}`,
    `-d${seconds}s`,
    '--latency',
    '-H',
    `X-Api-Key: ${line.key}`,
    `http://127.0.0.1:${port}/articles?limit=20`,
  ]);
  const text = spawnSync(cmd, argv, { encoding: 'utf8' }).stdout;
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(text)?.[1] ?? 0);
  const requests = Number(/(\d+) requests in/.exec(text)?.[1] ?? 0);
  const p99 = /^\s+99%\s+([\d.]+\w+)/m.exec(text)?.[1] ?? '?';
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(text)?.[1] ?? 0);
  return { rps, p99, non2xx, requests };
};

/** A fixed number of requests (CPU mode): the same page, the same caller, CONNS at a time. */
const fixed = (line, amount) =>
  new Promise((done, fail) =>
    autocannon(
      {
        url: `http://127.0.0.1:${PORT}/articles?limit=20`,
        headers: { 'x-api-key': line.key },
        connections: CONNS,
        amount,
      },
      (error, result) =>
        error
          ? fail(error)
          : done({
              rps: result.requests.average,
              p99: `${result.latency.p99}ms`,
              non2xx: result.non2xx,
              requests: result['2xx'] + result.non2xx,
            }),
    ),
  );

/** CPU seconds of every PostgreSQL backend the server has open, by pid (PG_CPU=1 on a PostgreSQL line only). */
const backendSeconds = async (line) => {
  const out = new Map();
  if (!env.PG_CPU || line.store !== 'pg') return out;
  const { rows } = await admin.query('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [
    `bench-computed-${PORT}`,
  ]);
  for (const { pid } of rows) {
    try {
      out.set(pid, cpuSeconds(pid));
    } catch {}
  }
  return out;
};
const backendSpent = (before, after) => {
  let s = 0;
  for (const [pid, t] of after) s += t - (before.get(pid) ?? 0);
  return s;
};

const callgrind = (flag, pid, value) =>
  execFileSync('callgrind_control', [value ? `${flag}=${value}` : flag, String(pid)], { stdio: 'ignore' });
/** Instructions counted in the server's dump after the counters were zeroed (all its threads). */
const instructions = (line, pid) => {
  const files = readdirSync(grindDir).filter((f) => f.startsWith(`${fileOf(line)}.${pid}.out.`));
  let total = 0;
  for (const f of files) total += Number(/^summary:\s+(\d+)/m.exec(readFileSync(join(grindDir, f), 'utf8'))?.[1] ?? 0);
  return total;
};

// The answers differ only by the computed fields, and those are right for the caller.
const check = async (line, port = PORT) => {
  const page = await (
    await fetch(`http://127.0.0.1:${port}/articles?limit=20`, { headers: { 'x-api-key': line.key } })
  ).json();
  const first = page.data[0];
  if (page.data.length !== 20) throw new Error(`${line.label}: ${page.data.length} records`);
  // Article 0 is favourited by the caller alone: 1 in all, 0 by others.
  const count = line.computed === 'caller' ? 0 : 1;
  if (line.computed && (first.favorited !== true || first.favoritesCount !== count))
    throw new Error(`${line.label}: article 0 answered ${JSON.stringify(first)}`);
  if (!line.computed && 'favorited' in first) throw new Error(`${line.label}: computed fields without them`);
};

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const results = new Map(lines.map((l) => [l.label, []]));
const load = [];

/**
 * PAIR=1: a store's lines measured beside each other. Every line's server is up at once (all pinned to SERVER_CPU,
 * one loaded at a time) and the load moves from one to the next in SLICE-second slices (A B B A …, the other way
 * round in even rounds) until each has had DURATION seconds; a line's figure is its median slice. The host's speed
 * drifts by ±15 % from one second to the next on a shared VM (bench/RESULTS.md): lines minutes apart measure the
 * host as much as the computed fields, lines a second apart measure the fields.
 */
const runBeside = async (group, round) => {
  const runs = [];
  try {
    for (const [i, line] of group.entries()) {
      const port = PORT + 1 + i;
      runs.push({ line, port, child: await start(line, port), rates: [], cpu: 0, sys: 0, n: 0, p99s: [] });
    }
    for (const run of runs) {
      await check(run.line, run.port);
      wrk(run.line, WARMUP, run.port);
    }
    const slices = Math.max(2, Math.round(DURATION / SLICE));
    for (let k = 0; k < slices; k++) {
      const order = (k + round) % 2 === 0 ? runs : [...runs].reverse();
      for (const run of order) {
        const c0 = cpuSeconds(run.child.pid);
        const s0 = sysSeconds(run.child.pid);
        const m = wrk(run.line, SLICE, run.port);
        if (m.non2xx) throw new Error(`${run.line.label}: ${m.non2xx} answers not 2xx`);
        run.cpu += cpuSeconds(run.child.pid) - c0;
        run.sys += sysSeconds(run.child.pid) - s0;
        run.n += m.requests;
        run.rates.push(m.rps);
        run.p99s.push(m.p99);
      }
    }
    for (const run of runs) {
      const rps = median(run.rates);
      const r = {
        rps,
        p99: run.p99s.sort()[run.p99s.length >> 1],
        cpuUs: (run.cpu * 1e6) / Math.max(1, run.n),
        sysUs: (run.sys * 1e6) / Math.max(1, run.n),
        pgUs: 0,
        requests: run.n,
      };
      results.get(run.line.label).push(r);
      log(
        `round ${round} ${run.line.label}: ${rps.toFixed(0)} req/s (median of ${run.rates.length} slices: ${run.rates.map((x) => Math.round(x)).join(' ')}), ${r.cpuUs.toFixed(0)} µs server CPU per request`,
      );
    }
    load.push(Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]));
  } finally {
    for (const run of runs) await stop(run.child);
  }
};

for (let round = 1; round <= ROUNDS; round++) {
  if (PAIR) {
    for (const t of targets) {
      const group = lines.filter((l) => l.store === t.store);
      if (group.length) await runBeside(group, round);
    }
    continue;
  }
  for (const line of lines) {
    const child = await start(line);
    try {
      await check(line);
      if (CPU) await fixed(line, GRIND ? WARM : Math.ceil(CPU / 4));
      else wrk(line, WARMUP);
      if (GRIND) callgrind('-i', child.pid, 'on');
      if (GRIND) callgrind('-z', child.pid);
      const before = cpuSeconds(child.pid);
      const sysBefore = sysSeconds(child.pid);
      const pgBefore = await backendSeconds(line);
      const measured = CPU ? await fixed(line, CPU) : wrk(line, DURATION);
      const pgAfter = await backendSeconds(line);
      if (GRIND) callgrind('-d', child.pid);
      // The server's own CPU per answer: on a shared machine it moves far less than req/s with the neighbours' load.
      // Under GRIND, instructions per answer in its place (the column then reads k instructions).
      const r = {
        ...measured,
        cpuUs: GRIND
          ? instructions(line, child.pid) / 1000 / Math.max(1, measured.requests)
          : ((cpuSeconds(child.pid) - before) * 1e6) / Math.max(1, measured.requests),
        pgUs: (backendSpent(pgBefore, pgAfter) * 1e6) / Math.max(1, measured.requests),
        sysUs: ((sysSeconds(child.pid) - sysBefore) * 1e6) / Math.max(1, measured.requests),
      };
      if (measured.non2xx) throw new Error(`${line.label}: ${measured.non2xx} answers not 2xx`);
      results.get(line.label).push(r);
      load.push(Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]));
      log(
        `round ${round} ${line.label}: ${r.rps} req/s, ${r.cpuUs.toFixed(0)} ${GRIND ? 'k instructions' : 'µs server CPU'} per request${GRIND ? '' : ` (${r.sysUs.toFixed(0)} of it in the kernel)`}${pgBefore.size || pgAfter.size ? `, ${r.pgUs.toFixed(0)} µs PostgreSQL backends` : ''}, p99 ${r.p99}`,
      );
    } finally {
      await stop(child);
    }
  }
}
if (env.PG !== '0') {
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.end();
}
rmSync(WORK, { recursive: true, force: true });
const unit = GRIND ? 'k instructions/request' : 'server CPU µs/request';
const ratioName = GRIND ? 'off/on instructions' : 'off/on CPU';

const out = CPU
  ? [
      `| line | ${unit} (median) | per round | ${ratioName} per round | ${ratioName} (median) |${env.PG_CPU ? ' PostgreSQL backends µs/request (median) | per round |' : ''}`,
      `|:--|--:|:--|:--|--:|${env.PG_CPU ? '--:|:--|' : ''}`,
    ]
  : [
      '| line | req/s (median) | min..max | on/off req/s per round | on/off req/s (median) | server CPU µs/request (median) | off/on CPU per round | off/on CPU (median) |',
      '|:--|--:|--:|:--|--:|--:|:--|--:|',
    ];
for (const t of targets) {
  if (!lines.some((l) => l.store === t.store)) continue;
  const offLabel = `${t.store} list of 20, no computed fields`;
  // LINES without `off`: the lines' own figures, no ratios.
  const off = results.get(offLabel);
  const onLines = lines.filter((l) => l.store === t.store && l.computed).map((l) => l.label);
  const rows = off ? [[offLabel, off, undefined, undefined]] : [];
  for (const label of onLines) {
    const on = results.get(label);
    rows.push(
      off
        ? [label, on, on.map((r, i) => r.rps / off[i].rps), on.map((r, i) => off[i].cpuUs / r.cpuUs)]
        : [label, on, undefined, undefined],
    );
  }
  for (const [label, list, ratio, cpuRatio] of rows) {
    const rps = list.map((r) => r.rps);
    const fmt = (xs) => (xs ? xs.map((x) => x.toFixed(2)).join(', ') : '');
    if (CPU) {
      out.push(
        `| ${label} | ${Math.round(median(list.map((r) => r.cpuUs)))} | ${list.map((r) => r.cpuUs.toFixed(0)).join(', ')} | ${fmt(cpuRatio)} | ${cpuRatio ? median(cpuRatio).toFixed(2) : ''} |${env.PG_CPU ? ` ${t.store === 'pg' ? Math.round(median(list.map((r) => r.pgUs))) : ''} | ${t.store === 'pg' ? list.map((r) => r.pgUs.toFixed(0)).join(', ') : ''} |` : ''}`,
      );
      continue;
    }
    out.push(
      `| ${label} | ${Math.round(median(rps))} | ${Math.round(Math.min(...rps))}..${Math.round(Math.max(...rps))} | ${fmt(ratio)} | ${ratio ? median(ratio).toFixed(2) : ''} | ${Math.round(median(list.map((r) => r.cpuUs)))} | ${fmt(cpuRatio)} | ${cpuRatio ? median(cpuRatio).toFixed(2) : ''} |`,
    );
  }
}
process.stdout.write(
  `${out.join('\n')}\n\nload average (1 min) during the runs: ${Math.min(...load).toFixed(1)}..${Math.max(...load).toFixed(1)} (median ${median(load).toFixed(1)}); ${ROUNDS} rounds, ${PAIR ? `each store's lines side by side, ${SLICE} s slices alternating to ${DURATION}s each (+${WARMUP}s warm-up), wrk -t1 -c${CONNS}, a line's figure its median slice` : CPU ? `${CPU} requests (+${GRIND ? WARM : Math.ceil(CPU / 4)} warm-up), autocannon -c${CONNS}${GRIND ? ', callgrind' : ''}` : `${DURATION}s (+${WARMUP}s warm-up), wrk -t1 -c${CONNS}`}\n`,
);
