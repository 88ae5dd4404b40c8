// Hand-written reference: Fastify + better-sqlite3 (WAL, synchronous NORMAL, prepared statements), logger off.
// The approach of the reference hand-written Fastify + SQLite server the bench was given, plus the filtered list route the Ninefold bench uses.
//   GET  /items/:id                        one row by primary key
//   POST /items                            insert, body validated by fastify's JSON schema (ajv)
//   GET  /items?limit=20&price_gte=X       WHERE price >= ? ORDER BY id LIMIT 20
//   POST /orders/:id/:transition           place (cart → placed) or cancel (cart|placed → cancelled): in one
//                                          transaction, read the row, compare-and-set the status, append history
// env: PORT, DB (sqlite file with the anchors' items table), SQLITE_SYNC (NORMAL|FULL, default NORMAL)
import Database from 'better-sqlite3';
import Fastify from 'fastify';

const db = new Database(process.env.DB ?? 'items.sqlite');
db.pragma('journal_mode = WAL');
db.pragma(`synchronous = ${process.env.SQLITE_SYNC ?? 'NORMAL'}`);

const getOne = db.prepare('SELECT id, name, price, tags, created_at FROM items WHERE id = ?');
const list = db.prepare('SELECT id, name, price, tags, created_at FROM items ORDER BY id LIMIT ?');
const listGte = db.prepare('SELECT id, name, price, tags, created_at FROM items WHERE price >= ? ORDER BY id LIMIT ?');
// Plain INSERT with .run() (not INSERT … RETURNING through .get(), which starves the WAL checkpoint).
const insert = db.prepare('INSERT INTO items (name, price, tags, created_at) VALUES (?, ?, ?, ?)');
const getOrder = db.prepare('SELECT id, note, status, revision, created_at, updated_at FROM orders WHERE id = ?');
const casOrder = db.prepare(
  'UPDATE orders SET status = ?, revision = revision + 1, updated_at = ? WHERE id = ? AND status = ?',
);
const addHistory = db.prepare(
  'INSERT INTO order_history (order_id, transition, from_state, to_state, at, input) VALUES (?, ?, ?, ?, ?, ?)',
);
const TRANSITIONS = { place: { from: ['cart'], to: 'placed' }, cancel: { from: ['cart', 'placed'], to: 'cancelled' } };
/** The whole transition in one transaction: 404, 409 or the updated order. */
const transition = db.transaction((id, name, t, input) => {
  const row = getOrder.get(id);
  if (!row) return 404;
  if (!t.from.includes(row.status)) return 409;
  const at = new Date().toISOString();
  if (casOrder.run(t.to, at, id, row.status).changes !== 1) return 409;
  addHistory.run(id, name, row.status, t.to, at, JSON.stringify(input));
  return { ...row, status: t.to, revision: row.revision + 1, updated_at: at };
});
const toItem = (r) => ({ id: r.id, name: r.name, price: r.price, tags: JSON.parse(r.tags), createdAt: r.created_at });

const app = Fastify({ logger: false });

app.get(
  '/items/:id',
  { schema: { params: { type: 'object', required: ['id'], properties: { id: { type: 'integer', minimum: 1 } } } } },
  async (req, reply) => {
    const row = getOne.get(req.params.id);
    if (!row) return reply.code(404).send({ error: 'not found' });
    return toItem(row);
  },
);

app.get(
  '/items',
  {
    schema: {
      querystring: {
        type: 'object',
        additionalProperties: false,
        properties: {
          limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
          price_gte: { type: 'number', minimum: 0 },
        },
      },
    },
  },
  async (req) => {
    const { limit, price_gte: gte } = req.query;
    const rows = gte === undefined ? list.all(limit) : listGte.all(gte, limit);
    return { data: rows.map(toItem) };
  },
);

app.post(
  '/items',
  {
    schema: {
      body: {
        type: 'object',
        required: ['name', 'price'],
        additionalProperties: false,
        properties: {
          name: { type: 'string', minLength: 1, maxLength: 200 },
          price: { type: 'number', minimum: 0 },
          tags: { type: 'array', maxItems: 20, items: { type: 'string', maxLength: 50 } },
        },
      },
    },
  },
  async (req, reply) => {
    const { name, price, tags = [] } = req.body;
    const createdAt = new Date().toISOString();
    const id = Number(insert.run(name, price, JSON.stringify(tags), createdAt).lastInsertRowid);
    return reply.code(201).send({ id, name, price, tags, createdAt });
  },
);

app.post(
  '/orders/:id/:transition',
  {
    schema: {
      params: {
        type: 'object',
        required: ['id', 'transition'],
        properties: {
          id: { type: 'integer', minimum: 1 },
          transition: { type: 'string', enum: Object.keys(TRANSITIONS) },
        },
      },
      body: { type: 'object', additionalProperties: false, properties: {} },
    },
  },
  async (req, reply) => {
    const { id, transition: name } = req.params;
    const r = transition(id, name, TRANSITIONS[name], req.body ?? {});
    if (r === 404) return reply.code(404).send({ error: 'not found' });
    if (r === 409) return reply.code(409).send({ error: 'invalid transition' });
    return {
      id: r.id,
      note: r.note,
      status: r.status,
      revision: r.revision,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
    };
  },
);

await app.listen({ port: Number(process.env.PORT ?? 18083), host: '127.0.0.1' });
