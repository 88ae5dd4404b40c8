// node bench/grind-get.mjs — instructions per GET by id on SQLite, whatever the machine's load: each server runs
// under `valgrind --tool=callgrind` (node --single-threaded, so compilation and GC are counted where they happen),
// WARM requests warm it up, its counters are zeroed, N more are counted and dumped into OUT. Servers: Ninefold
// serving bench/items.yaml (`nf`), the same behind an API key, bench/items-auth.yaml (`nf-auth`), and the
// hand-written Fastify + better-sqlite3 server, bench/baseline-fastify.mjs (`fx`). The figures are read with
// `callgrind_annotate <file> | head` (the total over all threads; divide by N).
//
// env (defaults): SERVERS=nf,nf-auth,fx  WARM=3000  N=2000  CONNS=10  ITEMS=200  OUT=/tmp/grind-get
//                 NF_B=<another checkout's bin/ninefold.js> (servers `nfB` and `nfB-auth`: that build, serving
//                 bench/items.yaml and bench/items-auth.yaml)
//                 GRIND=0 (no valgrind: CPU time per request from /proc, for a quick look)
//                 NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' (node flags for the servers, space-separated)
//                 PORT=18900 (the first server's; the next ones count up from it)
//                 STRACE=1 (with GRIND=0: `strace -c -f` over the counted requests, into OUT/<server>.strace.txt)
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';

const BENCH = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(BENCH, '..');
const env = process.env;
const WARM = Number(env.WARM ?? 3000);
const N = Number(env.N ?? 2000);
const CONNS = Number(env.CONNS ?? 10);
const ITEMS = Number(env.ITEMS ?? 200);
const OUT = env.OUT ?? '/tmp/grind-get';
const GRIND = env.GRIND !== '0';
const SERVERS = (env.SERVERS ?? 'nf,nf-auth,fx').split(',');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
mkdirSync(OUT, { recursive: true });

const { checkFile } = await import(join(ROOT, 'dist/spec/check.js'));
const { buildPlan } = await import(join(ROOT, 'dist/plan/build-plan.js'));
const { SqliteStore } = await import(join(ROOT, 'dist/storage/index.js'));
const { issueApiKey } = await import(join(ROOT, 'dist/parts/auth/keys.js'));
const { monotonicFactory } = await import('ulid');

const dir = mkdtempSync(join(tmpdir(), 'nf-grind.'));
const items = Array.from({ length: ITEMS }, (_, k) => ({
  id: k + 1,
  name: `item ${k + 1}`,
  price: Math.round(((k + 1) * 137) % 100000) / 100,
  tags: [`t${(k + 1) % 10}`, `u${(k + 1) % 7}`],
  createdAt: new Date(Date.UTC(2024, 0, 1) + (k + 1) * 60000).toISOString(),
}));

/** Ninefold's db, through its own store (real ids), with one API key; items.yaml and items-auth.yaml share it. */
const seedNinefold = async (path) => {
  const checked = await checkFile(join(BENCH, 'items.yaml'));
  const store = new SqliteStore({ path });
  await store.migrate(buildPlan(checked.spec, checked.dir));
  const ulid = monotonicFactory();
  const ids = [];
  await store.transaction(async () => {
    for (const it of items) {
      const row = { id: ulid(Date.parse(it.createdAt)), createdAt: it.createdAt, updatedAt: it.createdAt, revision: 1 };
      Object.assign(row, { name: it.name, price: it.price, tags: it.tags });
      await store.insert('Item', row);
      ids.push(row.id);
    }
  });
  const key = (await issueApiKey(store, { subject: 'bench', roles: ['reader'] })).key;
  await store.close();
  return { ids, key };
};
const seedBaseline = (path) => {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.exec(`CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]', created_at TEXT NOT NULL)`);
  // The hand-written server prepares its transition statements at start-up: their tables must exist.
  db.exec(`CREATE TABLE orders (id INTEGER PRIMARY KEY, note TEXT, status TEXT NOT NULL, revision INTEGER NOT NULL,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL)`);
  db.exec(`CREATE TABLE order_history (seq INTEGER PRIMARY KEY, order_id INTEGER NOT NULL, transition TEXT NOT NULL,
    from_state TEXT NOT NULL, to_state TEXT NOT NULL, at TEXT NOT NULL, input TEXT NOT NULL)`);
  const ins = db.prepare('INSERT INTO items (id, name, price, tags, created_at) VALUES (?, ?, ?, ?, ?)');
  db.transaction(() => {
    for (const it of items) ins.run(it.id, it.name, it.price, JSON.stringify(it.tags), it.createdAt);
  })();
  db.close();
  return items.map((it) => String(it.id));
};

const nfDb = join(dir, 'items.db');
const nf = await seedNinefold(nfDb);
const fxDb = join(dir, 'items.sqlite');
const fxIds = seedBaseline(fxDb);

const start = (server, port) => {
  const flags = env.NODE_ARGS ? env.NODE_ARGS.split(' ') : [];
  const args =
    server === 'fx'
      ? [join(BENCH, 'baseline-fastify.mjs')]
      : [
          server.startsWith('nfB') ? env.NF_B : join(ROOT, 'bin/ninefold.js'),
          'serve',
          join(BENCH, server.endsWith('-auth') ? 'items-auth.yaml' : 'items.yaml'),
          '--port',
          String(port),
          '--db',
          nfDb,
          '--log-level',
          'warn',
        ];
  const cmd = GRIND
    ? [
        'valgrind',
        '--tool=callgrind',
        `--callgrind-out-file=${OUT}/${server}.%p.out`,
        process.execPath,
        '--single-threaded',
        ...flags,
        ...args,
      ]
    : [process.execPath, ...flags, ...args];
  return spawn(cmd[0], cmd.slice(1), {
    // With NODE_ARGS (--trace-gc, say) the servers' own output is shown.
    stdio: ['ignore', env.NODE_ARGS ? 'inherit' : 'ignore', 'inherit'],
    env: { ...env, PORT: String(port), DB: fxDb },
  });
};
const control = (flag, pid) =>
  new Promise((ok, fail) => {
    const c = spawn('callgrind_control', [flag, String(pid)], { stdio: 'ignore' });
    c.once('exit', (code) => (code === 0 ? ok() : fail(new Error(`callgrind_control ${flag}: ${code}`))));
  });
const cpuMs = (pid) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
};
const fire = (port, amount, ids, headers, offset) =>
  new Promise((ok, fail) => {
    let i = offset;
    autocannon(
      {
        url: `http://127.0.0.1:${port}`,
        connections: CONNS,
        amount,
        requests: [
          { method: 'GET', headers, setupRequest: (req) => ({ ...req, path: `/items/${ids[i++ % ids.length]}` }) },
        ],
      },
      (error, result) => (error ? fail(error) : ok(result.non2xx + result.errors)),
    );
  });

for (const [k, server] of SERVERS.entries()) {
  const port = Number(env.PORT ?? 18900) + k;
  const child = start(server, port);
  const ids = server === 'fx' ? fxIds : nf.ids;
  const headers = server.endsWith('-auth') ? { 'x-api-key': nf.key } : {};
  try {
    for (let i = 0; ; i++) {
      try {
        if ((await fetch(`http://127.0.0.1:${port}/items/${ids[0]}`, { headers })).status === 200) break;
      } catch {}
      if (i > 3000) throw new Error(`${server} did not start`);
      await sleep(100);
    }
    const bad0 = await fire(port, WARM, ids, headers, 0);
    if (GRIND) await control('-z', child.pid);
    const strace =
      env.STRACE && !GRIND
        ? spawn('strace', ['-c', '-f', '-o', `${OUT}/${server}.strace.txt`, '-p', String(child.pid)])
        : undefined;
    if (strace) await sleep(500);
    const t0 = cpuMs(child.pid);
    const bad = await fire(port, N, ids, headers, WARM);
    const t1 = cpuMs(child.pid);
    if (strace) {
      strace.kill('SIGINT');
      await new Promise((r) => strace.once('exit', r));
    }
    if (GRIND) await control('-d', child.pid);
    console.log(
      `${server}: ${N} GETs counted after ${WARM} (${bad0 + bad} not 2xx), CPU ${(((t1 - t0) * 1000) / N).toFixed(0)} µs/request${GRIND ? ` (under valgrind); counters in ${OUT}/${server}.${child.pid}.out*` : ''}`,
    );
  } finally {
    const gone = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await gone;
  }
}
rmSync(dir, { recursive: true, force: true });
