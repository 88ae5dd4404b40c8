// Hand-written reference on PostgreSQL: Fastify + node-postgres (the driver the Ninefold store uses), logger off.
// The same routes and the same work as bench/baseline-fastify.mjs, written for a database server:
//   GET  /items/:id                        one row by primary key
//   POST /items                            one INSERT … RETURNING id (autocommit), body validated by ajv
//   GET  /items?limit=20&price_gte=X       WHERE price >= $1 ORDER BY id LIMIT $2 (index on (price, id))
//   POST /orders/:id/:transition           place (cart → placed) or cancel (cart|placed → cancelled): in one
//                                          transaction, read the row, compare-and-set the status, append history
// Every statement is prepared once per connection (a `name`); one pool of PG_POOL (10) connections, as Ninefold's.
// Times are ISO text and tags JSON text, as in the SQLite reference and in Ninefold's tables: the same bytes move.
// With WEBHOOK_URL and WEBHOOK_SECRET, POST /items also publishes `Item.created` to one webhook receiver, by hand, the
// transactional-outbox way (bench/webhook-outbox-pg.mjs): the item and its outbox row in one statement, delivered
// after commit, at least once.
// env: PORT, DB (postgres://user@host:port/database?schema=NAME; the schema holds the tables of bench/run.mjs),
//      WEBHOOK_URL, WEBHOOK_SECRET (whsec_…)
import Fastify from 'fastify';
import pg from 'pg';
import { startOutboxDelivery } from './webhook-outbox-pg.mjs';

const url = new URL(process.env.DB ?? 'postgres://postgres@127.0.0.1:5432/test');
const schema = url.searchParams.get('schema') ?? 'public';
url.searchParams.delete('schema');
const pool = new pg.Pool({
  connectionString: url.toString(),
  max: Number(process.env.PG_POOL ?? 10),
  options: `-c search_path=${schema}`,
});

const COLUMNS = 'id, name, price, tags, created_at';
const ORDER_COLUMNS = 'id, note, status, revision, created_at, updated_at';
const statement = (name, text) => (values) => ({ name, text, values });
const getOne = statement('get_item', `SELECT ${COLUMNS} FROM items WHERE id = $1`);
const list = statement('list_items', `SELECT ${COLUMNS} FROM items ORDER BY id LIMIT $1`);
const listGte = statement('list_items_gte', `SELECT ${COLUMNS} FROM items WHERE price >= $1 ORDER BY id LIMIT $2`);
const insert = statement(
  'insert_item',
  'INSERT INTO items (name, price, tags, created_at) VALUES ($1, $2, $3, $4) RETURNING id',
);
// The item and its event in one statement (one implicit transaction): the event exists exactly when the item does.
const insertWithEvent = statement(
  'insert_item_event',
  `WITH item AS (INSERT INTO items (name, price, tags, created_at) VALUES ($1, $2, $3, $4) RETURNING id)
   INSERT INTO outbox (type, time, data)
   SELECT 'Item.created', $4, json_build_object('record',
     json_build_object('id', id, 'name', $1::text, 'price', $2::float8, 'tags', $3::json, 'createdAt', $4::text))::text
   FROM item RETURNING (SELECT id FROM item)`,
);
const getOrder = statement('get_order', `SELECT ${ORDER_COLUMNS} FROM orders WHERE id = $1`);
const casOrder = statement(
  'cas_order',
  'UPDATE orders SET status = $1, revision = revision + 1, updated_at = $2 WHERE id = $3 AND status = $4',
);
const addHistory = statement(
  'add_history',
  'INSERT INTO order_history (order_id, transition, from_state, to_state, at, input) VALUES ($1, $2, $3, $4, $5, $6)',
);
const TRANSITIONS = { place: { from: ['cart'], to: 'placed' }, cancel: { from: ['cart', 'placed'], to: 'cancelled' } };

/** The whole transition in one transaction: 404, 409 or the updated order. */
const transition = async (id, name, t, input) => {
  const client = await pool.connect();
  let failed;
  try {
    await client.query('BEGIN');
    const row = (await client.query(getOrder([id]))).rows[0];
    let result = 404;
    if (row && !t.from.includes(row.status)) result = 409;
    else if (row) {
      const at = new Date().toISOString();
      if ((await client.query(casOrder([t.to, at, id, row.status]))).rowCount !== 1) result = 409;
      else {
        await client.query(addHistory([id, name, row.status, t.to, at, JSON.stringify(input)]));
        result = { ...row, status: t.to, revision: row.revision + 1, updated_at: at };
      }
    }
    await client.query(typeof result === 'object' ? 'COMMIT' : 'ROLLBACK');
    return result;
  } catch (error) {
    failed = error;
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release(failed);
  }
};
const toItem = (r) => ({ id: r.id, name: r.name, price: r.price, tags: JSON.parse(r.tags), createdAt: r.created_at });

const outbox =
  process.env.WEBHOOK_URL && process.env.WEBHOOK_SECRET
    ? startOutboxDelivery(pool, { url: process.env.WEBHOOK_URL, secret: process.env.WEBHOOK_SECRET })
    : undefined;

const app = Fastify({ logger: false });

app.get(
  '/items/:id',
  { schema: { params: { type: 'object', required: ['id'], properties: { id: { type: 'integer', minimum: 1 } } } } },
  async (req, reply) => {
    const row = (await pool.query(getOne([req.params.id]))).rows[0];
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
    const { rows } = await pool.query(gte === undefined ? list([limit]) : listGte([gte, limit]));
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
    const values = [name, price, JSON.stringify(tags), createdAt];
    const { rows } = await pool.query(outbox ? insertWithEvent(values) : insert(values));
    outbox?.wake();
    return reply.code(201).send({ id: rows[0].id, name, price, tags, createdAt });
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
    const r = await transition(id, name, TRANSITIONS[name], req.body ?? {});
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
