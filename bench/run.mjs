// npm run bench — Ninefold against two reference anchors on the same machine and the same 10,000 items:
//   fx  the hand-written Fastify + better-sqlite3 server (bench/baseline-fastify.mjs), no logging
//   js  json-server 0.17.4 (node_modules/json-server), --quiet
//   nf  Ninefold serving bench/items.yaml with its production defaults, except --log-level warn
//       (plus one line at --log-level info, the default, to show what request logs cost)
//   fx-pg, nf-pg  the same on PostgreSQL (PG_URL): bench/baseline-fastify-pg.mjs (Fastify + node-postgres) and
//       `ninefold serve --db postgres://…?schema=…`, each run on a fresh schema (bench/pg-data.mjs), dropped after;
//       POST with one webhook is held to the hand-written server doing the same job (fx-pg-post-hook: item and outbox
//       row in one statement, delivered by its own loop, bench/webhook-outbox-pg.mjs), and shown against the plain
//       hand-written POST as well (informational)
// Webhook lines: every event must reach the receiver (bench/receiver.mjs, which checks each signature): after the
// drain figure the bench waits (DELIVER_WAIT s at most) until every created item's event was received, and says so.
// Every line runs ROUNDS times, interleaved; each run is a fresh server process on fresh data, pinned to
// SERVER_CPU, with the load generator (wrk + bench/wrk-ids.lua, else autocannon) pinned to CLIENT_CPU.
// The order of the lines changes from round to round (roundOrder below), so that no line always follows the same
// one and inherits its heat, GC or thermal state: odd rounds run them forward, even rounds backward, and every two
// rounds the start moves on by one line. Deterministic: the same LINES give the same order.
//
// env (defaults): ROUNDS=3 DURATION=10 WARMUP=2 CONNS=50 PIN=1 SERVER_CPU=0 CLIENT_CPU=1 LOADGEN=wrk|autocannon
//                 LINES=<comma-separated keys, see LINES below> KEEP_DATA=0 RESULTS=bench/RESULTS.md (''=don't write)
//                 ORDERS=150000 (orders in cart for the transition lines: each request takes the next fresh one)
//                 PG_URL=postgres://postgres@127.0.0.1:5432/test (the PostgreSQL lines; left out of the default set when unreachable)
//                 REDIS_URL=redis://127.0.0.1:6379 (the line with rate counters in Redis)
//                 NF_NODE_ARGS= (node flags for Ninefold's servers, a diagnosis: each round's server.log keeps their output)
//                 SLICE=1 (seconds of each slice of the lines paired `alternate`: reads, creates, limits)
//                 WORKDIR= (where data and each round's files go; by default a fresh temporary directory)
//                 DRAIN=5 PACED=5 PACED_RATE=1000 DELIVER_WAIT=90 (the webhook lines' delivery figures, seconds)
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openPgData } from './pg-data.mjs';

const BENCH = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(BENCH, '..');
const env = process.env;
const ROUNDS = Number(env.ROUNDS ?? 3);
const DURATION = Number(env.DURATION ?? 10);
const WARMUP = Number(env.WARMUP ?? 2);
const CONNS = Number(env.CONNS ?? 50);
const N = 10_000;
const ORDERS = Number(env.ORDERS ?? 150_000);
const POST_BODY = '{"name":"widget","price":9.99,"tags":["a","b"]}';
const SPEC = join(BENCH, 'items.yaml');
const AUTH_SPEC = join(BENCH, 'items-auth.yaml');
const EVENTS_SPEC = join(BENCH, 'items-events.yaml');
const RATE_SPEC = join(BENCH, 'items-rate.yaml');
const REFUSED_SPEC = join(BENCH, 'items-refused.yaml');
const REDIS_URL = env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const RECEIVER_PORT = 18400;
const log = (...a) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${a.join(' ')}\n`);
const has = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;

// ------------------------------------------------------------------ build, tools
if (!existsSync(join(ROOT, 'dist/cli/main.js'))) {
  log('dist/ missing: building (npx tsc -p tsconfig.json)');
  execFileSync('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: ROOT, stdio: 'inherit' });
}
let LOADGEN = env.LOADGEN ?? 'wrk';
if (LOADGEN === 'wrk' && !has('wrk')) {
  log('wrk not found (apt-get install -y wrk): using autocannon');
  LOADGEN = 'autocannon';
}
const PIN = env.PIN !== '0' && has('taskset');
const SERVER_CPU = env.SERVER_CPU ?? '0';
const CLIENT_CPU = env.CLIENT_CPU ?? '1';
const pinned = (cpu, cmd, args) => (PIN ? ['taskset', ['-c', cpu, cmd, ...args]] : [cmd, args]);

const { checkFile } = await import(join(ROOT, 'dist/spec/check.js'));
const { buildPlan } = await import(join(ROOT, 'dist/plan/build-plan.js'));
const { SqliteStore } = await import(join(ROOT, 'dist/storage/index.js'));
const { issueApiKey } = await import(join(ROOT, 'dist/parts/auth/keys.js'));
const { monotonicFactory } = await import('ulid');
const Database = (await import('better-sqlite3')).default;

// ------------------------------------------------------------------ data
const WORK = env.WORKDIR ?? mkdtempSync(join(tmpdir(), 'ninefold-bench.'));
mkdirSync(join(WORK, 'data'), { recursive: true });
// The anchors' items (the formula of the reference seed the bench was given): ids 1..N for the baselines.
const orderCreatedAt = (i) => new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString();
const items = [];
for (let i = 1; i <= N; i++) {
  items.push({
    id: i,
    name: `item ${i}`,
    price: Math.round((i * 137) % 100000) / 100,
    tags: [`t${i % 10}`, `u${i % 7}`],
    createdAt: new Date(Date.UTC(2024, 0, 1) + i * 60000).toISOString(),
  });
}
writeFileSync(join(WORK, 'data/db.json'), JSON.stringify({ items }, null, 2));
{
  const file = join(WORK, 'data/items.sqlite');
  for (const f of [file, `${file}-wal`, `${file}-shm`]) rmSync(f, { force: true });
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.exec(`CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]', created_at TEXT NOT NULL)`);
  db.exec(`CREATE TABLE orders (id INTEGER PRIMARY KEY, note TEXT, status TEXT NOT NULL, revision INTEGER NOT NULL,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL)`);
  db.exec(`CREATE TABLE order_history (seq INTEGER PRIMARY KEY, order_id INTEGER NOT NULL, transition TEXT NOT NULL,
    from_state TEXT NOT NULL, to_state TEXT NOT NULL, at TEXT NOT NULL, input TEXT NOT NULL)`);
  db.exec('CREATE INDEX order_history_by_order ON order_history (order_id, seq)');
  const ins = db.prepare('INSERT INTO items (id, name, price, tags, created_at) VALUES (?, ?, ?, ?, ?)');
  const insOrder = db.prepare(
    "INSERT INTO orders (id, note, status, revision, created_at, updated_at) VALUES (?, ?, 'cart', 1, ?, ?)",
  );
  db.transaction(() => {
    for (const it of items) ins.run(it.id, it.name, it.price, JSON.stringify(it.tags), it.createdAt);
    for (let i = 1; i <= ORDERS; i++) insOrder.run(i, `order ${i}`, orderCreatedAt(i), orderCreatedAt(i));
  })();
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}
writeFileSync(join(WORK, 'data/ids-int.txt'), `${items.map((it) => it.id).join('\n')}\n`);
writeFileSync(join(WORK, 'data/order-ids-int.txt'), `${Array.from({ length: ORDERS }, (_, i) => i + 1).join('\n')}\n`);

const checked = await checkFile(SPEC);
if (!checked.spec) throw new Error(`bench/items.yaml does not check: ${JSON.stringify(checked.diagnostics)}`);
const plan = buildPlan(checked.spec, checked.dir);

/**
 * The Ninefold db with the same N items and ORDERS orders in cart, written once through SqliteStore after migrate
 * (real Ninefold ids); every run gets a fresh copy of it.
 */
let apiKey = '';
/** The rows seedNinefold wrote, for the PostgreSQL seed (the same ids). */
const nfRows = {};
const seedNinefold = async (path) => {
  const store = new SqliteStore({ path });
  await store.migrate(plan);
  const ulid = monotonicFactory();
  const ids = [];
  const orderIds = [];
  nfRows.items = [];
  nfRows.orders = [];
  await store.transaction(async () => {
    for (const it of items) {
      const ts = Date.UTC(2024, 0, 1) + it.id * 60000;
      const row = { id: ulid(ts), createdAt: it.createdAt, updatedAt: it.createdAt, revision: 1 };
      row.name = it.name;
      row.price = it.price;
      row.tags = it.tags;
      await store.insert('Item', row);
      ids.push(row.id);
      nfRows.items.push(row);
    }
    for (let i = 1; i <= ORDERS; i++) {
      const at = orderCreatedAt(i);
      const row = { id: ulid(Date.parse(at)), createdAt: at, updatedAt: at, revision: 1, note: `order ${i}` };
      row.status = 'cart';
      await store.insert('Order', row);
      orderIds.push(row.id);
      nfRows.orders.push(row);
    }
  });
  // The key the "API key" line sends (bench/items-auth.yaml reads the same file).
  apiKey = (await issueApiKey(store, { subject: 'bench', roles: ['reader'] })).key;
  await store.close();
  const db = new Database(path);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  writeFileSync(join(WORK, 'data/nf-ids.txt'), `${ids.join('\n')}\n`);
  writeFileSync(join(WORK, 'data/nf-order-ids.txt'), `${orderIds.join('\n')}\n`);
};
log(`seeding ${N.toLocaleString('en')} items and ${ORDERS.toLocaleString('en')} orders for each server`);
await seedNinefold(join(WORK, 'data/items.db'));

// ------------------------------------------------------------------ lines
const NF = (port, level, spec = SPEC) => [
  join(ROOT, 'bin/ninefold.js'),
  'serve',
  spec,
  '--port',
  String(port),
  '--db',
  '{db}',
  '--log-level',
  level,
];
const FX = [join(BENCH, 'baseline-fastify.mjs')];
const JS = (port) => [
  join(ROOT, 'node_modules/json-server/lib/cli/bin.js'),
  'db.json',
  '--host',
  '127.0.0.1',
  '--quiet',
  '--port',
  String(port),
];
const jsVersion = JSON.parse(readFileSync(join(ROOT, 'node_modules/json-server/package.json'), 'utf8')).version;
const GET = { op: 'get', method: 'GET', path: '/items/{id}' };
const POST = { op: 'post', method: 'POST', path: '/items', body: POST_BODY };
// Transitions on fresh records: every request takes the next order in cart and places it; once all are placed,
// the next pass cancels them in the same order. Each record answers each transition once (a repeat would be 409).
const TRANSITION = {
  op: 'transition',
  method: 'POST',
  path: '/orders/{id}/place',
  path2: '/orders/{id}/cancel',
  body: '{}',
  orders: true,
};
const ALL_LINES = [
  {
    key: 'nf-get',
    server: 'nf',
    ...GET,
    port: 18191,
    args: NF(18191, 'warn'),
    label: 'ninefold GET /items/{id}',
    pair: 'alternate',
  },
  { key: 'fx-get', server: 'fx', ...GET, port: 18192, args: FX, label: 'fastify+sqlite GET /items/:id' },
  {
    key: 'js-get',
    server: 'js',
    ...GET,
    port: 18193,
    args: JS(18193),
    label: `json-server ${jsVersion} GET /items/:id`,
  },
  {
    key: 'nf-get-key',
    pair: 'alternate',
    server: 'nf',
    ...GET,
    port: 18203,
    args: NF(18203, 'warn', AUTH_SPEC),
    label: 'ninefold GET /items/{id} + X-Api-Key',
    apiKey: true,
    target: 0.75,
  },
  {
    key: 'nf-get-info',
    server: 'nf',
    ...GET,
    port: 18194,
    args: NF(18194, 'info'),
    label: 'ninefold GET (log-level info)',
    extra: true,
  },
  // Limits (docs/limits.md): a rate limit never reached, the same with counters in Redis, and refusals (every
  // request but the first is answered 429: its "errs" are those refusals), each against plain GET by id.
  {
    key: 'nf-get-rate',
    pair: 'alternate',
    server: 'nf',
    ...GET,
    port: 18211,
    args: NF(18211, 'warn', RATE_SPEC),
    label: 'ninefold GET /items/{id}, rate limit never reached',
    ref: 'nf-get',
    refName: 'Ninefold GET without limits',
    target: 0.95,
  },
  {
    key: 'nf-get-rate-redis',
    pair: 'alternate',
    server: 'nf',
    ...GET,
    port: 18212,
    args: NF(18212, 'warn', RATE_SPEC),
    env: { NINEFOLD_REDIS_URL: REDIS_URL },
    label: 'ninefold GET /items/{id}, rate limit in Redis',
    ref: 'nf-get',
    refName: 'Ninefold GET without limits',
    target: 0.7,
  },
  {
    key: 'nf-get-refused',
    pair: 'alternate',
    server: 'nf',
    ...GET,
    port: 18213,
    args: NF(18213, 'warn', REFUSED_SPEC),
    label: 'ninefold GET /items/{id} over its rate limit (429s)',
    ref: 'nf-get',
    refName: 'Ninefold GET served',
    target: 2,
  },
  {
    key: 'raw-refused',
    server: 'raw',
    ...GET,
    port: 18224,
    args: [join(BENCH, 'baseline-refuse.mjs')],
    label: 'node:http alone, a fixed 429 (the floor of a refusal)',
    ref: 'nf-get',
    extra: true,
  },
  {
    key: 'raw-refused-turn',
    server: 'raw',
    ...GET,
    port: 18225,
    args: [join(BENCH, 'baseline-refuse.mjs')],
    env: { BATCH: '1' },
    label: "node:http alone, a fixed 429, a turn's answers together",
    ref: 'nf-get',
    // Beside Ninefold's GET, as nf-get-refused is: the two refusals' ratios are then read against the same GETs.
    pair: 'alternate',
    extra: true,
  },
  {
    key: 'nf-post',
    server: 'nf',
    ...POST,
    port: 18195,
    args: NF(18195, 'warn'),
    label: 'ninefold POST /items',
    pair: 'alternate',
  },
  {
    key: 'nf-post-hook',
    server: 'nf',
    ...POST,
    port: 18204,
    args: NF(18204, 'warn', EVENTS_SPEC),
    label: 'ninefold POST /items + outbox + 1 webhook',
    webhook: true,
    ref: 'nf-post',
    pair: true,
    target: 0.85,
  },
  {
    key: 'nf-post-outbox',
    server: 'nf',
    ...POST,
    port: 18205,
    args: NF(18205, 'warn', EVENTS_SPEC),
    label: 'ninefold POST /items + outbox, no webhook',
    extra: true,
  },
  { key: 'fx-post', server: 'fx', ...POST, port: 18196, args: FX, label: 'fastify+sqlite POST /items' },
  {
    key: 'js-post',
    server: 'js',
    ...POST,
    port: 18197,
    args: JS(18197),
    label: `json-server ${jsVersion} POST /items`,
  },
  {
    key: 'nf-list',
    pair: 'alternate',
    server: 'nf',
    op: 'list',
    method: 'GET',
    port: 18198,
    args: NF(18198, 'warn'),
    path: '/items?limit=20&price[gte]={price}',
    label: 'ninefold GET /items?limit=20&price[gte]=X',
  },
  {
    key: 'fx-list',
    server: 'fx',
    op: 'list',
    method: 'GET',
    port: 18199,
    args: FX,
    path: '/items?limit=20&price_gte={price}',
    label: 'fastify+sqlite GET list price>=X limit 20',
  },
  {
    key: 'js-list',
    server: 'js',
    op: 'list',
    method: 'GET',
    port: 18200,
    args: JS(18200),
    path: '/items?price_gte={price}&_limit=20',
    label: `json-server ${jsVersion} GET list price_gte&_limit=20`,
  },
  {
    key: 'nf-transition',
    server: 'nf',
    ...TRANSITION,
    port: 18201,
    args: NF(18201, 'warn'),
    label: 'ninefold POST /orders/{id}/place|cancel',
  },
  {
    key: 'fx-transition',
    server: 'fx',
    ...TRANSITION,
    port: 18202,
    args: FX,
    label: 'fastify+sqlite POST /orders/:id/place|cancel',
  },
];
// The same operations on PostgreSQL, each Ninefold line held to the hand-written Fastify + node-postgres line.
const FX_PG = [join(BENCH, 'baseline-fastify-pg.mjs')];
const LIST = { op: 'list', method: 'GET' };
const pgPair = (op, base, nfPort, nfPath, fxPath, label) => [
  {
    key: `nf-pg-${op}`,
    server: 'nf',
    store: 'pg',
    ...base,
    ...(nfPath ? { path: nfPath } : {}),
    port: nfPort,
    args: NF(nfPort, 'warn'),
    label: `ninefold on PG ${label}`,
    ref: `fx-pg-${op}`,
    // Reads and creates alternate with the hand-written server (a transition takes the next fresh order in turn).
    ...(op === 'get' || op === 'list' || op === 'post' ? { pair: 'alternate' } : {}),
    target: 0.8,
  },
  {
    key: `fx-pg-${op}`,
    server: 'fx',
    store: 'pg',
    ...base,
    ...(fxPath ? { path: fxPath } : {}),
    port: nfPort + 1,
    args: FX_PG,
    label: `fastify+pg ${label}`,
    ref: `fx-pg-${op}`,
  },
];
const [nfPgPost, fxPgPost] = pgPair('post', POST, 18208, undefined, undefined, 'POST /items');
// The hand-written server's webhook secret (Ninefold makes its own when the endpoint is created).
const FX_WEBHOOK_SECRET = `whsec_${randomBytes(24).toString('base64')}`;
ALL_LINES.push(
  ...pgPair('get', GET, 18206, undefined, undefined, 'GET /items/{id}'),
  nfPgPost,
  {
    ...nfPgPost,
    key: 'nf-pg-post-hook',
    // Not nf-pg-post's pairing: a webhook line's deliveries are measured after its own run.
    pair: undefined,
    port: 18210,
    args: NF(18210, 'warn', EVENTS_SPEC),
    label: 'ninefold on PG POST /items + outbox + 1 webhook',
    webhook: true,
    ref: 'fx-pg-post-hook',
    target: 0.8,
    // The figure this line was held to before the hand-written webhook line existed: what webhooks cost.
    also: [{ ref: 'fx-pg-post', name: 'against the plain hand-written POST (no events)' }],
  },
  fxPgPost,
  {
    ...fxPgPost,
    key: 'fx-pg-post-hook',
    port: 18215,
    label: 'fastify+pg POST /items + outbox + 1 webhook',
    env: { WEBHOOK_URL: `http://127.0.0.1:${RECEIVER_PORT}/hook`, WEBHOOK_SECRET: FX_WEBHOOK_SECRET },
    webhook: true,
    ref: 'fx-pg-post-hook',
    also: [{ ref: 'fx-pg-post', name: 'against the plain hand-written POST (no events)' }],
  },
  ...pgPair('list', LIST, 18211, '/items?limit=20&price[gte]={price}', '/items?limit=20&price_gte={price}', 'list'),
  ...pgPair('transition', TRANSITION, 18213, undefined, undefined, 'POST /orders/{id}/place|cancel'),
);
/** The line a paired line is measured beside: its reference, or the hand-written line of its operation. */
const pairRefOf = (line) => line.ref ?? `fx-${line.op}`;
const wanted = env.LINES ? env.LINES.split(',').map((s) => s.trim()) : ALL_LINES.map((l) => l.key);
const LINES = ALL_LINES.filter((l) => wanted.includes(l.key));
const TARGET = { get: 0.8, post: 0.7, list: 0.8, transition: 0.7 };
const JS_FACTOR = 3;

// ------------------------------------------------------------------ PostgreSQL data (only when a PG line runs)
const PG_URL = env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const plans = new Map([[SPEC, plan]]);
/** The plan of the spec a Ninefold line serves (its schema is migrated with it before the server starts). */
const planOf = async (line) => {
  if (line.server !== 'nf') return undefined;
  const spec = line.args[2];
  if (!plans.has(spec)) {
    const c = await checkFile(spec);
    if (!c.spec) throw new Error(`${spec} does not check: ${JSON.stringify(c.diagnostics)}`);
    plans.set(spec, buildPlan(c.spec, c.dir));
  }
  return plans.get(spec);
};
let pgData;
if (LINES.some((l) => l.store === 'pg')) {
  pgData = await openPgData(PG_URL, ROOT).catch((error) => {
    // Named on purpose, the PostgreSQL lines need their database; in the default set they are left out without it.
    if (env.LINES) throw error;
    log(`PostgreSQL not reachable at ${PG_URL} (${error.message}): its lines are left out`);
    for (let i = LINES.length - 1; i >= 0; i--) if (LINES[i].store === 'pg') LINES.splice(i, 1);
    return undefined;
  });
}
if (pgData) {
  log(`seeding PostgreSQL ${pgData.version} (${PG_URL}): seed schemas, copied into a fresh schema for each run`);
  await pgData.seed({
    plan,
    items,
    orders: Array.from({ length: ORDERS }, (_, i) => ({
      id: i + 1,
      note: `order ${i + 1}`,
      createdAt: orderCreatedAt(i + 1),
    })),
    nfItems: nfRows.items,
    nfOrders: nfRows.orders,
  });
}

// ------------------------------------------------------------------ webhook delivery figures (POST + 1 webhook line)
const receiverStats = async () => (await fetch(`http://127.0.0.1:${RECEIVER_PORT}/stats`)).json();
const resetReceiver = async () => void (await fetch(`http://127.0.0.1:${RECEIVER_PORT}/reset`, { method: 'POST' }));
/** The receiver checks every signature from now on against `secret` too. */
const tellSecret = async (secret) =>
  void (await fetch(`http://127.0.0.1:${RECEIVER_PORT}/secret`, { method: 'POST', body: secret }));
/** A Ninefold webhook endpoint for the receiver at `path`; its id. */
const subscribe = async (port, path) => {
  const made = await fetch(`http://127.0.0.1:${port}/webhook-endpoints`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ url: `http://127.0.0.1:${RECEIVER_PORT}${path}` }),
  });
  if (made.status !== 201) throw new Error(`webhook endpoint not created: ${made.status} ${await made.text()}`);
  const { id, secret } = await made.json();
  await tellSecret(secret);
  return id;
};
const DRAIN_S = Number(env.DRAIN ?? 5);
const DELIVER_WAIT_S = Number(env.DELIVER_WAIT ?? 90);
const PACED_RATE = Number(env.PACED_RATE ?? 1000);
const PACED_S = Number(env.PACED ?? 5);
/**
 * Waits until the receiver has accepted an event for each of the `created()` items (at most DELIVER_WAIT seconds,
 * and not past 10 s without progress); the receiver's counts then.
 */
const awaitAll = async (created) => {
  const until = Date.now() + DELIVER_WAIT_S * 1000;
  let stats = await receiverStats();
  let expected = await created();
  let progress = Date.now();
  while (stats.unique < expected && Date.now() < until && Date.now() - progress < 10_000) {
    await sleep(250);
    const next = await receiverStats();
    if (next.unique > stats.unique) progress = Date.now();
    stats = next;
    expected = await created();
  }
  return { expected, unique: stats.unique, dupes: stats.dupes, bad: stats.bad };
};
/**
 * Three figures, after the saturating POST run: (1) deliveries made while creates ran flat out (Ninefold's API has
 * the process and its deliveries trickle; the hand-written loop delivers as it goes); (2) the drain rate once the
 * load stops (the backlog delivered for DRAIN seconds, as fast as the receiver answers); then the check that every
 * event was delivered; (3) commit-to-receipt latency at a steady PACED_RATE creates/s (well below saturation), for
 * Ninefold on a fresh endpoint (the first deleted), then the check again.
 */
const measureDeliveries = async (line, endpointId, created, cpuSince) => {
  const out = {};
  const during = await receiverStats();
  out.delivered = during.count;
  out.p50 = during.p50;
  out.p99latency = during.p99;
  await resetReceiver();
  await sleep(DRAIN_S * 1000);
  const drained = await receiverStats();
  out.drainRate = drained.last > drained.first ? drained.count / ((drained.last - drained.first) / 1000) : Number.NaN;
  const waited = Date.now();
  out.all = await awaitAll(created);
  out.all.seconds = (Date.now() - waited) / 1000 + DRAIN_S;
  // The same job done by both servers whatever they deferred: server CPU from the warm-up's start until the last
  // event was received, per item created.
  out.all.cpuUs = (cpuSince() * 1e6) / out.all.expected;
  if (line.server === 'nf') {
    await fetch(`http://127.0.0.1:${line.port}/webhook-endpoints/${endpointId}`, { method: 'DELETE' });
    await subscribe(line.port, '/paced');
    await sleep(2500); // the worker takes the endpoint up at its next lease renewal at the latest
  }
  await resetReceiver();
  const [cmd, argv] = pinned(CLIENT_CPU, process.execPath, [
    join(BENCH, 'paced.mjs'),
    `http://127.0.0.1:${line.port}/items`,
    String(PACED_RATE),
    String(PACED_S),
    POST_BODY,
  ]);
  const paced = JSON.parse(execFileSync(cmd, argv, { encoding: 'utf8' }));
  await sleep(1000);
  const steady = await receiverStats();
  out.paced = { ...paced, received: steady.count, p50: steady.p50, p99: steady.p99 };
  out.final = await awaitAll(created);
  return out;
};

/** How many items a run created so far: its item rows past the seed's. */
const createdBy = async (line, db, pgSchema) => {
  if (pgSchema) return pgData.created(line.server, pgSchema);
  const table = (await planOf(line)).resources.find((r) => r.name === 'Item').table;
  const sqlite = new Database(db, { readonly: true });
  try {
    return sqlite.prepare(`SELECT count(*) AS n FROM "${table}"`).get().n - N;
  } finally {
    sqlite.close();
  }
};

// ------------------------------------------------------------------ server + load helpers
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const ready = async (url, child) => {
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) return false;
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await res.arrayBuffer();
      if (res.status < 500) return true;
    } catch {}
    await sleep(100);
  }
  return false;
};
const startServer = async (line, dir, db) => {
  const args = line.args.map((a) => a.replace('{db}', db ?? ''));
  // NF_NODE_ARGS: node flags for Ninefold's servers only, for a diagnosis (e.g. --trace-gc: see each round's server.log).
  if (line.server === 'nf' && env.NF_NODE_ARGS) args.unshift(...env.NF_NODE_ARGS.split(' ').filter(Boolean));
  const [cmd, argv] = pinned(SERVER_CPU, process.execPath, args);
  const out = openSync(join(dir, 'server.log'), 'a');
  const child = spawn(cmd, argv, {
    cwd: dir,
    detached: true,
    stdio: ['ignore', out, out],
    env: { ...env, ...line.env, PORT: String(line.port), DB: db ?? '', SQLITE_SYNC: 'NORMAL' },
  });
  const readyPath = line.server === 'nf' ? '/healthz' : '/items/1';
  if (!(await ready(`http://127.0.0.1:${line.port}${readyPath}`, child))) {
    stopServer(child);
    throw new Error(
      `${line.key}: server did not start, see ${join(dir, 'server.log')}:\n${readFileSync(join(dir, 'server.log'), 'utf8').slice(-2000)}`,
    );
  }
  return child;
};
const stopServer = async (child) => {
  if (child.exitCode !== null) return;
  const gone = new Promise((r) => child.once('exit', r));
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {}
  if (await Promise.race([gone.then(() => true), sleep(5000).then(() => false)])) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {}
  await gone;
};
const loadgen = (line, seconds, idsFile, seqStart) => {
  const lgEnv = { ...env, WRK_PATH: line.path, WRK_METHOD: line.method, WRK_BODY: line.body ?? '', WRK_IDS: idsFile };
  if (line.path2) lgEnv.WRK_PATH2 = line.path2;
  if (line.apiKey) lgEnv.WRK_HEADER = `X-Api-Key: ${apiKey}`;
  if (seqStart !== undefined) lgEnv.WRK_SEQ_START = String(seqStart);
  const base = `http://127.0.0.1:${line.port}`;
  const [cmd, argv] =
    LOADGEN === 'wrk'
      ? pinned(CLIENT_CPU, 'wrk', [
          '-t1',
          `-c${CONNS}`,
          `-d${seconds}s`,
          '--timeout',
          '10s',
          '--latency',
          '-s',
          join(BENCH, 'wrk-ids.lua'),
          base,
        ])
      : pinned(CLIENT_CPU, process.execPath, [join(BENCH, 'ac-run.mjs'), base, String(seconds), String(CONNS)]);
  const r = spawnSync(cmd, argv, { env: lgEnv, encoding: 'utf8', maxBuffer: 1 << 24 });
  return `${r.stdout}\n${r.stderr}`;
};
const parse = (text) => {
  let rps = 0,
    p99 = Number.NaN,
    errs = 0;
  for (const l of text.split('\n')) {
    const rate = /^Requests\/sec:\s+([\d.]+)/.exec(l);
    const latency = /^\s+99%\s+([\d.]+)(us|ms|s|m)\b/.exec(l);
    const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(l);
    const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(l);
    if (rate) rps = Number(rate[1]);
    else if (latency) p99 = Number(latency[1]) * { us: 0.001, ms: 1, s: 1000, m: 60000 }[latency[2]];
    else if (non2xx) errs += Number(non2xx[1]);
    else if (socket) errs += Number(socket[1]) + Number(socket[2]) + Number(socket[3]) + Number(socket[4]);
  }
  return { rps, p99, errs };
};
const nproc = Number(execFileSync('nproc', { encoding: 'utf8' }).trim());
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
/** CPU seconds used so far by a process (utime + stime). */
const cpuSeconds = (pid) => {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) / CLK_TCK;
  } catch {
    return Number.NaN;
  }
};
const loadavg = () => Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
const walBytes = (db) => (db && existsSync(`${db}-wal`) ? statSync(`${db}-wal`).size : 0);

// ------------------------------------------------------------------ run
const wrkVersion =
  LOADGEN === 'wrk'
    ? spawnSync('wrk', ['--version'], { encoding: 'utf8' }).stdout.split('\n')[0].split(' [')[0].trim()
    : '';
log(
  `workdir ${WORK}; loadgen ${LOADGEN}; ${ROUNDS} rounds x ${LINES.length} lines, ${DURATION}s (+${WARMUP}s warm-up), ${CONNS} connections, pin=${PIN}`,
);
const results = []; // {round, key, rps, p99, errs, wal}
const SLICE = Number(env.SLICE ?? 1);
const med = (a) => {
  const s = a.filter(Number.isFinite).sort((x, y) => x - y);
  if (!s.length) return Number.NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
let current;
let besideServer; // the second server of an alternating pair
const onSignal = async () => {
  if (current) await stopServer(current);
  if (besideServer) await stopServer(besideServer);
  await pgData?.close().catch(() => undefined);
  process.exit(130);
};
process.once('SIGINT', onSignal);
process.once('SIGTERM', onSignal);
/**
 * The lines of round `round` (from 1): LINES turned by ⌊(round − 1) / 2⌋ places, backward on even rounds. With two
 * lines: AB, BA, BA, AB, AB, …; each line runs first, and after each other line, about as often as the others.
 */
const roundOrder = (round) => {
  const turn = Math.floor((round - 1) / 2) % LINES.length;
  const order = [...LINES.slice(turn), ...LINES.slice(0, turn)];
  return round % 2 === 0 ? order.reverse() : order;
};
/** A run's directory and fresh data: its database (a copy, or a fresh PostgreSQL schema) and its ids file. */
const prepareRun = async (line, round, beside) => {
  const dir = join(WORK, 'run', beside ? `${line.key}-${round}-beside-${beside}` : `${line.key}-${round}`);
  mkdirSync(dir, { recursive: true });
  let db, ids, pgSchema;
  if (line.store === 'pg') {
    const name = beside ? `${line.key}_${round}_${beside}` : `${line.key}_${round}`;
    ({ url: db, schema: pgSchema } = await pgData.fresh(line.server, name, await planOf(line)));
    ids = join(
      WORK,
      line.server === 'nf'
        ? line.orders
          ? 'data/nf-order-ids.txt'
          : 'data/nf-ids.txt'
        : line.orders
          ? 'data/order-ids-int.txt'
          : 'data/ids-int.txt',
    );
  } else if (line.server === 'nf') {
    db = join(dir, 'items.db');
    copyFileSync(join(WORK, 'data/items.db'), db);
    ids = join(WORK, line.orders ? 'data/nf-order-ids.txt' : 'data/nf-ids.txt');
  } else if (line.server === 'fx') {
    db = join(dir, 'items.sqlite');
    copyFileSync(join(WORK, 'data/items.sqlite'), db);
    ids = join(WORK, line.orders ? 'data/order-ids-int.txt' : 'data/ids-int.txt');
  } else {
    copyFileSync(join(WORK, 'data/db.json'), join(dir, 'db.json'));
    ids = join(WORK, 'data/ids-int.txt');
  }
  return { dir, db, ids, pgSchema };
};
/** Removes a run's data files (unless KEEP_DATA=1). */
const cleanRun = (dir) => {
  if (env.KEEP_DATA !== '1')
    for (const f of [
      'items.db',
      'items.db-wal',
      'items.db-shm',
      'items.sqlite',
      'items.sqlite-wal',
      'items.sqlite-shm',
      'db.json',
    ])
      rmSync(join(dir, f), { force: true });
};
const logRun = (line, round, r, db, beside) => {
  const walText = line.op === 'post' && db ? `  wal ${(r.wal / 1048576).toFixed(1)} MiB` : '';
  const besideText = beside ? ` (beside ${beside}${r.slices ? `, ${r.slices} slices` : ''})` : '';
  log(
    `round ${round}  ${line.key.padEnd(11)} ${r.rps.toFixed(0).padStart(7)} req/s  p99 ${r.p99.toFixed(2).padStart(7)} ms  errs ${r.errs}  srv cpu ${r.cpu.toFixed(0)}%  loadavg ${r.load}${walText}${besideText}`,
  );
};
/**
 * One run of `line` in `round`: a fresh server on fresh data, warm-up, the measured load. `beside`: the key of the
 * line this run was made beside, as its reference (see `pair`).
 */
const runLine = async (line, round, beside) => {
  const { dir, db, ids, pgSchema } = await prepareRun(line, round, beside);
  let receiver;
  let endpointId;
  if (line.webhook) {
    const [cmd, argv] = pinned(CLIENT_CPU, process.execPath, [join(BENCH, 'receiver.mjs'), String(RECEIVER_PORT)]);
    receiver = spawn(cmd, argv, { stdio: 'ignore' });
    await sleep(300);
  }
  current = await startServer(line, dir, db);
  if (line.webhook && line.server === 'nf') endpointId = await subscribe(line.port, '/hook');
  else if (line.webhook) await tellSecret(line.env.WEBHOOK_SECRET);
  const cWarm = cpuSeconds(current.pid);
  const warm = loadgen(line, WARMUP, ids, line.orders ? 0 : undefined);
  writeFileSync(join(dir, 'warmup.txt'), warm);
  // The measured run goes on with the orders the warm-up did not touch (its count, plus what was in flight).
  const warmed = Number(/(\d+) requests in/.exec(warm)?.[1] ?? 0);
  const c0 = cpuSeconds(current.pid);
  const t0 = performance.now();
  const text = loadgen(line, DURATION, ids, line.orders ? warmed + CONNS : undefined);
  const cpu = ((cpuSeconds(current.pid) - c0) / ((performance.now() - t0) / 1000)) * 100;
  writeFileSync(join(dir, 'load.txt'), text);
  const r = { round, key: line.key, beside, ...parse(text), wal: walBytes(db), cpu, load: loadavg() };
  if (receiver) {
    const created = () => createdBy(line, db, pgSchema);
    Object.assign(r, await measureDeliveries(line, endpointId, created, () => cpuSeconds(current.pid) - cWarm));
  }
  if (receiver) {
    receiver.kill('SIGTERM');
    await new Promise((ok) => receiver.once('exit', ok));
  }
  await stopServer(current);
  current = undefined;
  if (pgSchema && env.KEEP_DATA !== '1') await pgData.drop(pgSchema);
  results.push(r);
  logRun(line, round, r, db, beside);
  cleanRun(dir);
};
/** Requests and seconds of one wrk run, from its "N requests in Xs" line. */
const countOf = (text) => {
  const m = /(\d+) requests in ([\d.]+)(us|ms|s|m)\b/.exec(text);
  return m ? { n: Number(m[1]), secs: Number(m[2]) * { us: 1e-6, ms: 1e-3, s: 1, m: 60 }[m[3]] } : { n: 0, secs: 0 };
};
/**
 * `line` and its reference measured together: both servers up at once (both pinned to SERVER_CPU, only one loaded at
 * a time), the load alternating between them in slices of SLICE seconds (A B B A …, B first in even rounds) for
 * DURATION seconds each. The host's own speed drifts by ±15 % from one second to the next on a shared VM
 * (bench/RESULTS.md); slices this short give both servers the same host, so their ratio is the feature's cost.
 */
const runAlternating = async (line, partner, round) => {
  const runs = [
    { line: partner, beside: line.key, ...(await prepareRun(partner, round, line.key)) },
    { line, ...(await prepareRun(line, round)) },
  ];
  for (const run of runs) {
    run.child = await startServer(run.line, run.dir, run.db);
    if (run === runs[0]) besideServer = run.child;
    else current = run.child;
    writeFileSync(join(run.dir, 'warmup.txt'), loadgen(run.line, WARMUP, run.ids));
    Object.assign(run, { n: 0, secs: 0, cpu: 0, wall: 0, errs: 0, p99s: [], rates: [], slices: 0 });
  }
  const perServer = Math.max(2, Math.round(DURATION / SLICE));
  const texts = [[], []];
  for (let i = 0; i < 2 * perServer; i++) {
    const which = ([0, 1, 1, 0][i % 4] + (round % 2 === 0 ? 1 : 0)) % 2;
    const run = runs[which];
    const c0 = cpuSeconds(run.child.pid);
    const t0 = performance.now();
    const text = loadgen(run.line, SLICE, run.ids);
    run.wall += (performance.now() - t0) / 1000;
    run.cpu += cpuSeconds(run.child.pid) - c0;
    const { n, secs } = countOf(text);
    const parsed = parse(text);
    run.n += n;
    run.secs += secs;
    run.rates.push(secs ? n / secs : Number.NaN);
    run.errs += parsed.errs;
    run.p99s.push(parsed.p99);
    run.slices++;
    texts[which].push(text);
  }
  for (const [i, run] of runs.entries()) {
    writeFileSync(join(run.dir, 'load.txt'), texts[i].join('\n----\n'));
    const wal = walBytes(run.db);
    await stopServer(run.child);
    const r = {
      round,
      key: run.line.key,
      beside: run.beside,
      // The median slice: a slice the host slowed or sped for a moment does not move it.
      rps: med(run.rates),
      p99: med(run.p99s),
      errs: run.errs,
      wal,
      cpu: (run.cpu / run.wall) * 100,
      load: loadavg(),
      slices: run.slices,
    };
    results.push(r);
    logRun(run.line, round, r, run.db, run.beside);
    if (run.pgSchema && env.KEEP_DATA !== '1') await pgData.drop(run.pgSchema);
    cleanRun(run.dir);
  }
  current = undefined;
  besideServer = undefined;
};
const started = Date.now();
for (let round = 1; round <= ROUNDS; round++) {
  for (const line of roundOrder(round)) {
    // A paired line's reference runs again right beside it, before it in odd rounds and after it in even ones.
    const partner = line.pair ? ALL_LINES.find((l) => l.key === pairRefOf(line)) : undefined;
    // Lines paired `alternate` share the host with their reference slice by slice (wrk only).
    if (partner && line.pair === 'alternate' && LOADGEN === 'wrk') {
      await runAlternating(line, partner, round);
      continue;
    }
    if (partner && round % 2 === 1) await runLine(partner, round, line.key);
    await runLine(line, round);
    if (partner && round % 2 === 0) await runLine(partner, round, line.key);
  }
}

if (pgData && env.KEEP_DATA !== '1') await pgData.close();

// ------------------------------------------------------------------ summary
const f = (x, d = 0) => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');
const runsOf = (key) => results.filter((r) => r.key === key && !r.beside);
const rpsAt = (key, round) => results.find((r) => r.key === key && r.round === round && !r.beside)?.rps;
/** The reference's run made right beside `key`'s run of `round` (paired lines). */
const besideAt = (key, ref, round) => results.find((r) => r.key === ref && r.round === round && r.beside === key)?.rps;
const PAIRED = new Map(ALL_LINES.filter((l) => l.pair).map((l) => [l.key, pairRefOf(l)]));
/** Per round: line / reference, the reference's run beside it for a paired line, else its run in the same round. */
const roundRatios = (key, ref, paired = PAIRED.get(key) === ref) =>
  runsOf(key).map((r) => r.rps / ((paired ? besideAt(key, ref, r.round) : rpsAt(ref, r.round)) ?? Number.NaN));
// ratio per round, then the median over rounds
const ratio = (key, ref, paired) => med(roundRatios(key, ref, paired));
const rows = [
  ['line', 'req/s (median)', 'min..max', 'p99 ms', 'vs hand-written', 'vs json-server', 'srv CPU%', 'errs', 'target'],
];
const verdicts = [];
for (const line of LINES) {
  const runs = runsOf(line.key);
  const v = runs.map((r) => r.rps);
  const xFx = ratio(line.key, line.ref ?? `fx-${line.op}`);
  const xJs = line.store === 'pg' ? Number.NaN : ratio(line.key, `js-${line.op}`);
  let target = '';
  if (line.server === 'nf' && !line.extra) {
    const wanted = line.target ?? TARGET[line.op];
    const okFx = xFx >= wanted;
    const refName =
      line.refName ?? (line.store === 'pg' ? 'hand-written' : line.ref ? 'Ninefold without events' : 'hand-written');
    // json-server has no state machines (the transition line) and no PostgreSQL: those are held to the
    // hand-written server only.
    // Lines held to another Ninefold line (refName: the limits lines) are not compared with json-server.
    const hasJs = line.store !== 'pg' && !line.refName && ALL_LINES.some((l) => l.key === `js-${line.op}`);
    const okJs = !hasJs || xJs >= JS_FACTOR;
    const jsText = hasJs ? `; >= ${JS_FACTOR}x json-server: ${okJs ? 'yes' : 'no'}` : '';
    target = `${okFx && okJs ? 'MET' : 'MISSED'} (>= ${wanted * 100}% ${refName}: ${okFx ? 'yes' : 'no'}${jsText})`;
    verdicts.push({ op: line.key.replace(/^nf-/, ''), ok: okFx && okJs, xFx, xJs });
  } else if (line.extra) target = '(informational)';
  rows.push([
    line.label,
    f(med(v)),
    `${f(Math.min(...v))}..${f(Math.max(...v))}`,
    f(med(runs.map((r) => r.p99)), 2),
    f(xFx, 2),
    f(xJs, 2),
    f(med(runs.map((r) => r.cpu))),
    String(runs.reduce((s, r) => s + r.errs, 0)),
    target,
  ]);
}
const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
const table = rows.map(
  (r) => `| ${r.map((c, i) => (i === 0 || i === 8 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(' | ')} |`,
);
table.splice(
  1,
  0,
  `|${widths.map((w, i) => (i === 0 || i === 8 ? `:${'-'.repeat(w + 1)}` : `${'-'.repeat(w + 1)}:`)).join('|')}|`,
);
const walOf = (key) => runsOf(key).map((r) => r.wal);
const mib = (b) => `${(b / 1048576).toFixed(2)} MiB`;
const walLines = [];
if (runsOf('nf-post').length) {
  const w = walOf('nf-post');
  const posted = runsOf('nf-post').map((r) => Math.round(r.rps * DURATION));
  walLines.push(
    `Ninefold WAL file after each POST run (server still up, before its shutdown checkpoint): ${w.map(mib).join(', ')} (max ${mib(Math.max(...w))}) after ~${posted.map((p) => p.toLocaleString('en')).join(', ')} inserts (measured part of each run): bounded by the autocheckpoint`,
  );
}
const allText = (a) =>
  `${a.unique}/${a.expected}${a.unique >= a.expected ? '' : ' NOT ALL'}${a.dupes ? ` (${a.dupes} twice)` : ''}${a.bad ? ` (${a.bad} refused: bad signature)` : ''}`;
for (const key of ['nf-post-hook', 'nf-pg-post-hook', 'fx-pg-post-hook']) {
  const hooks = runsOf(key);
  if (!hooks.length) continue;
  const per = (fn) => hooks.map(fn).join(', ');
  const trickle = key.startsWith('nf-')
    ? 'the API keeps the process; deliveries trickle, the rest wait in the outbox'
    : 'the hand-written loop delivers as it goes, batch after batch';
  walLines.push(
    `Webhook deliveries (${key}: receiver on loopback, pinned beside the load generator, checking signatures), per round:`,
    `  - while creates ran flat out (${DURATION}s): ${per((h) => h.delivered)} delivered (${trickle}); commit-to-receipt p50 ${per((h) => f(h.p50))} ms, p99 ${per((h) => f(h.p99latency))} ms`,
    `  - drain once the load stopped (${DRAIN_S}s of the backlog): ${per((h) => f(h.drainRate))} deliveries/s`,
    `  - every event delivered (distinct webhook-ids received / items created, warm-up included): ${per((h) => allText(h.all))}, after ${per((h) => f(h.all.seconds))} s`,
    `  - server CPU per item created and delivered (warm-up start to last receipt, server process only): ${per((h) => f(h.all.cpuUs))} µs`,
    `  - steady load, ${PACED_RATE} creates/s for ${PACED_S}s${key.startsWith('nf-') ? ' on a fresh endpoint' : ''}: received ${per((h) => `${h.paced.received}/${h.paced.sent}`)}; commit-to-receipt p50 ${per((h) => f(h.paced.p50))} ms, p99 ${per((h) => f(h.paced.p99))} ms; then all delivered: ${per((h) => allText(h.final))}`,
  );
}
for (const line of LINES.filter((l) => l.pair))
  walLines.push(
    `${line.key} against ${pairRefOf(line)} run beside it (the target's figure), per round: ${roundRatios(
      line.key,
      pairRefOf(line),
      true,
    )
      .map((x) => f(x, 2))
      .join(', ')}; against ${pairRefOf(line)}'s own run of the same round (minutes away): ${roundRatios(
      line.key,
      pairRefOf(line),
      false,
    )
      .map((x) => f(x, 2))
      .join(', ')}`,
  );
for (const line of LINES)
  for (const also of line.also ?? [])
    walLines.push(
      `${line.key} ${also.name} (${also.ref}, informational): ${f(ratio(line.key, also.ref), 2)} (rounds ${runsOf(
        line.key,
      )
        .map((r) => f(r.rps / (rpsAt(also.ref, r.round) ?? Number.NaN), 2))
        .join(', ')})`,
    );
if (runsOf('fx-post').length)
  walLines.push(`hand-written server WAL after its POST runs: ${walOf('fx-post').map(mib).join(', ')}`);

const cpu = (readFileSync('/proc/cpuinfo', 'utf8').match(/model name\s*:\s*(.*)/) ?? [])[1] ?? 'unknown';
const sqliteVer = new Database(':memory:').prepare('select sqlite_version() v').get().v;
const pkgVer = (name) => JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')).version;
const command = `ROUNDS=${ROUNDS} DURATION=${DURATION} WARMUP=${WARMUP} CONNS=${CONNS}${env.LINES ? ` LINES=${env.LINES}` : ''} npm run bench`;
const machine = [
  `- date: ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}; total wall ${Math.round((Date.now() - started) / 1000)} s`,
  `- command: \`${command}\``,
  `- machine: ${nproc} cores, ${cpu}; kernel ${execFileSync('uname', ['-r'], { encoding: 'utf8' }).trim()}`,
  `- node ${process.version}; fastify ${pkgVer('fastify')}; better-sqlite3 ${pkgVer('better-sqlite3')} (SQLite ${sqliteVer}); json-server ${jsVersion}`,
  `- load: ${LOADGEN === 'wrk' ? `${wrkVersion} -t1 -c${CONNS} -d${DURATION}s --latency, bench/wrk-ids.lua` : `autocannon ${pkgVer('autocannon')} -c${CONNS} -d${DURATION}`} (+${WARMUP}s warm-up discarded), keep-alive`,
  `- pinning: ${PIN ? `server on cpu ${SERVER_CPU}, load generator on cpu ${CLIENT_CPU} (taskset)` : 'none'}`,
  ...(pgData
    ? [
        `- PostgreSQL ${pgData.version} on 127.0.0.1 (a system service: not pinned, its backends run on either core); node-postgres ${pkgVer('pg')}, pool of 10 in both servers`,
      ]
    : []),
];
const header = `Ninefold runs with its production defaults except logging: --log-level warn (the baselines log nothing); "ninefold GET (log-level info)" is the default level, for the cost of request logs.`;
const summary = [
  header,
  '',
  ...table,
  '',
  'req/s and p99: median over rounds. Ratios: median over rounds of (line / reference line of the same round).',
  `Paired lines (${[...PAIRED.keys()].join(', ')}): the host's own speed drifts (±15 % from one second to the next on a shared VM, more`,
  'over minutes), so each run of them is held to a run of its reference made beside it, not to the reference line of the same round:',
  `the reads and creates with both servers up and the load alternating between them in ${SLICE} s slices (A B B A …) for the same total time, each`,
  "server's figure the median of its slices; the webhook line right before (odd rounds) or after (even rounds) its own run.",
  "The unpaired lines' rows (the references' own, json-server's) are their own runs.",
  'Both figures are listed below the table.',
  'Order: the lines run in another order each round (odd rounds forward, even rounds backward, the start moving on by one line every two rounds), so that no line always follows the same one.',
  'Targets for Ninefold: GET by id >= 80% of hand-written, POST >= 70%, list >= 80%, each >= 3x json-server;',
  'a transition (place, then cancel, on fresh records) >= 70% of the hand-written compare-and-set route;',
  'GET by id with an API key in a header >= 75% of the hand-written GET (which checks nothing);',
  'POST with events on and one webhook endpoint >= 85% of Ninefold POST without events.',
  'On PostgreSQL, each Ninefold line >= 80% of the hand-written Fastify + node-postgres line of the same operation;',
  'POST with one webhook against the hand-written POST with its own transactional outbox and webhook delivery.',
  'srv CPU% = server process CPU time / wall time while measured (100% = one core): well below 100% means the server',
  `was starved (other load on the host). Host 1-min load average during the runs: median ${f(med(results.map((r) => r.load)), 1)}, max ${f(Math.max(...results.map((r) => r.load)), 1)} (${nproc} cores; this bench itself accounts for ~2).`,
  '',
  ...walLines.map((l) => (l.startsWith('  - ') ? l : `- ${l}`)),
];
console.log(`\n${summary.join('\n')}\n\n${machine.join('\n')}\n`);
console.log(`Targets: ${verdicts.map((v) => `${v.op} ${v.ok ? 'met' : 'MISSED'}`).join(', ')}`);
console.log(`raw outputs: ${WORK}/run/<line>-<round>/load.txt`);

const resultsFile = env.RESULTS ?? join(BENCH, 'RESULTS.md');
if (resultsFile) {
  const MARK = '<!-- results: everything below is overwritten by `npm run bench` -->';
  const METHOD = `# Ninefold throughput bench

\`npm run bench\` (bench/run.mjs) measures Ninefold against two reference anchors on the same machine and the
same data, 10,000 items (item i: name \`item i\`, price (i·137 mod 100000)/100, tags \`t{i mod 10}\`, \`u{i mod 7}\`):

- **hand-written**: bench/baseline-fastify.mjs — Fastify + better-sqlite3, prepared statements, WAL,
  synchronous=NORMAL, ajv body schema, logger off (the approach of the reference hand-written server the bench was given, plus a
  filtered list \`WHERE price >= ? ORDER BY id LIMIT 20\`).
- **json-server 0.17.4** (\`--quiet\`): GET /items/:id, POST /items, GET /items?price_gte=X&_limit=20.
- **Ninefold**: \`ninefold serve bench/items.yaml --log-level warn\` (otherwise production defaults: WAL,
  durability normal, request ids, problem+json errors, ETags). Its db is migrated and seeded with the same 10,000
  items (and ORDERS orders in cart) through SqliteStore once; every run starts on a fresh copy (real Ninefold ids).
- **Transitions** (no json-server line: it has no state machines): \`POST /orders/{id}/place\` on the next fresh
  order in cart, then \`/cancel\` on each once all are placed; the hand-written route does the same
  compare-and-set in one transaction (read, \`UPDATE … WHERE status = ?\`, history row).

Lines are interleaved (every line once per round, ROUNDS rounds). Each run starts a fresh server process on a fresh
copy of the data, pinned with taskset to one core while the load generator (wrk -t1 with bench/wrk-ids.lua:
random ids from the seeded id list and random price thresholds 0..990, fixed seed; autocannon when wrk is missing)
runs on the other; a 2 s warm-up is discarded. POST body: \`${POST_BODY}\`.
The reads and creates (GET by id, with a key, the list, POST, on both stores) and a feature's cost (a rate limit never reached,
counters in Redis, refusals; POST with a webhook) are held to their reference line measured beside them: the reads and
limits lines with both servers up and the load alternating between them in 1 s slices (A B B A …, each server's
figure the median of its slices), the webhook line right before or after its own run, since the host's speed drifts
by ±15 % from one second to the next on a shared VM.
Knobs: ROUNDS, DURATION, WARMUP, CONNS, LINES, PIN, SERVER_CPU, CLIENT_CPU, LOADGEN, KEEP_DATA, RESULTS, SLICE,
NF_NODE_ARGS, WORKDIR.

`;
  const before =
    existsSync(resultsFile) && readFileSync(resultsFile, 'utf8').includes(MARK)
      ? readFileSync(resultsFile, 'utf8').split(MARK)[0]
      : METHOD;
  writeFileSync(resultsFile, `${before}${MARK}\n\n## Results\n\n${summary.join('\n')}\n\n${machine.join('\n')}\n`);
  log(`wrote ${resultsFile}`);
}
