// node-postgres (pg) against postgres.js on the statements the PostgreSQL store runs most: an insert by id, a read
// by id, and a transaction of two statements. CLIENTS concurrent callers share one pool of POOL connections; each
// line runs OPS operations per round, lines interleaved, ROUNDS rounds; the median ops/s of each line is reported.
// Usage: node bench/pg-drivers.mjs [postgres://postgres@127.0.0.1:5432/test]
// The store uses node-postgres; postgres.js is no dependency any more: `npm i --no-save postgres` before a rerun.
import pg from 'pg';

const postgres = await import('postgres').then(
  (m) => m.default,
  () => {
    console.error('postgres.js is not installed: npm i --no-save postgres');
    process.exit(1);
  },
);

const URL = process.argv[2] ?? process.env.NINEFOLD_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const CLIENTS = Number(process.env.CLIENTS ?? 32);
const POOL = Number(process.env.POOL ?? 10);
const OPS = Number(process.env.OPS ?? 4000);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const SCHEMA = `nf_bench_${process.pid}`;

const setup = new pg.Client({ connectionString: URL });
await setup.connect();
await setup.query(`CREATE SCHEMA ${SCHEMA}`);
await setup.query(`CREATE TABLE ${SCHEMA}.items (id text PRIMARY KEY, name text NOT NULL, price double precision)`);
await setup.query(`CREATE TABLE ${SCHEMA}.log (id bigserial PRIMARY KEY, item text NOT NULL)`);

const pool = new pg.Pool({ connectionString: URL, max: POOL, options: `-c search_path=${SCHEMA}` });
const sql = postgres(URL, { max: POOL, connection: { search_path: SCHEMA }, onnotice: () => {} });

let next = 0;
const ids = [];
const newId = (driver) => {
  const id = `${driver}_${process.pid}_${next++}`;
  ids.push(id);
  return id;
};
const someId = () => ids[Math.floor(Math.random() * ids.length)];

const drivers = {
  pg: {
    insert: () =>
      pool.query({
        name: 'ins',
        text: 'INSERT INTO items (id, name, price) VALUES ($1, $2, $3)',
        values: [newId('pg'), 'w', 9.99],
      }),
    get: () => pool.query({ name: 'get', text: 'SELECT * FROM items WHERE id = $1', values: [someId()] }),
    transaction: async () => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const id = newId('pg');
        await client.query({
          name: 'ins',
          text: 'INSERT INTO items (id, name, price) VALUES ($1, $2, $3)',
          values: [id, 'w', 1],
        });
        await client.query({ name: 'log', text: 'INSERT INTO log (item) VALUES ($1)', values: [id] });
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw error;
      } finally {
        client.release();
      }
    },
  },
  postgresjs: {
    insert: () => sql`INSERT INTO items (id, name, price) VALUES (${newId('pj')}, ${'w'}, ${9.99})`,
    get: () => sql`SELECT * FROM items WHERE id = ${someId()}`,
    transaction: () =>
      sql.begin(async (tx) => {
        const id = newId('pj');
        await tx`INSERT INTO items (id, name, price) VALUES (${id}, ${'w'}, ${1})`;
        await tx`INSERT INTO log (item) VALUES (${id})`;
      }),
  },
};

/** Runs `op` OPS times with CLIENTS callers at once; operations per second. */
const measure = async (op) => {
  let left = OPS;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (left-- > 0) await op();
    }),
  );
  return OPS / (Number(process.hrtime.bigint() - started) / 1e9);
};

const results = {};
try {
  // Warm-up: both pools full, statements prepared, some rows to read.
  for (const d of Object.values(drivers)) for (const op of Object.values(d)) await measure(op);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [driver, ops] of Object.entries(drivers)) {
      for (const [line, op] of Object.entries(ops)) {
        const key = `${line}|${driver}`;
        results[key] = [...(results[key] ?? []), await measure(op)];
      }
    }
  }
} finally {
  await pool.end();
  await sql.end();
  await setup.query(`DROP SCHEMA ${SCHEMA} CASCADE`);
  await setup.end();
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`clients ${CLIENTS}, pool ${POOL}, ${OPS} ops per round, median of ${ROUNDS} rounds (ops/s)`);
console.log('line         node-postgres  postgres.js  ratio (postgres.js / pg)');
for (const line of Object.keys(drivers.pg)) {
  const a = median(results[`${line}|pg`]);
  const b = median(results[`${line}|postgresjs`]);
  console.log(`${line.padEnd(12)} ${a.toFixed(0).padStart(13)}  ${b.toFixed(0).padStart(11)}  ${(b / a).toFixed(2)}`);
}
