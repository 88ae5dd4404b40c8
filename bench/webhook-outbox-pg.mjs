// Webhook delivery from a transactional outbox, written by hand for the hand-written PostgreSQL server
// (bench/baseline-fastify-pg.mjs): what a competent engineer writes without a framework.
//   - the writer commits its row and an `outbox` row together, then calls wake();
//   - one loop in the process (woken after each commit, and every POLL_MS in any case) claims up to BATCH due rows
//     (`FOR UPDATE SKIP LOCKED`, so a second process would take other rows), POSTs each to the receiver over
//     keep-alive connections (undici Pool), and in the same transaction deletes the delivered rows and gives the
//     others a later due time (exponential, capped): at least once, and nothing lost on a crash, since a row is
//     committed with its item and deleted only after its receiver answered 2xx;
//   - signed as Ninefold signs (Standard Webhooks): `webhook-id`, `webhook-timestamp`, `webhook-signature:
//     v1,<base64 HMAC-SHA256 of "id.timestamp.body">` keyed with the secret's decoded bytes.
// The outbox table is made by bench/pg-data.mjs.
import { createHmac } from 'node:crypto';
import { Pool } from 'undici';

const BATCH = 100;
const POLL_MS = 500;
/** Connections to the receiver, and requests in flight at once (Ninefold: 8 per endpoint). */
const CONNECTIONS = 8;
const TIMEOUT_MS = 10_000;

const statement = (name, text) => (values) => ({ name, text, values });
const claim = statement(
  'outbox_claim',
  'SELECT id, type, time, data FROM outbox WHERE due_at <= now() ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED',
);
const markDelivered = statement('outbox_delivered', 'DELETE FROM outbox WHERE id = ANY($1::bigint[])');
const retryLater = statement(
  'outbox_retry',
  `UPDATE outbox SET attempts = attempts + 1,
     due_at = now() + least(interval '1 second' * power(2, attempts), interval '1 hour')
   WHERE id = ANY($1::bigint[])`,
);

/** Starts delivering the outbox of `pool`'s database to `url`; wake() after each commit that wrote to it. */
export const startOutboxDelivery = (pool, { url, secret }) => {
  const target = new URL(url);
  const receiver = new Pool(target.origin, {
    connections: CONNECTIONS,
    pipelining: 1,
    headersTimeout: TIMEOUT_MS,
    bodyTimeout: TIMEOUT_MS,
  });
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const path = `${target.pathname}${target.search}`;

  /** One event to the receiver, signed; whether it answered 2xx. */
  const send = async (row) => {
    const id = `evt_${row.id}`;
    const body = `{"id":"${id}","type":${JSON.stringify(row.type)},"time":${JSON.stringify(row.time)},"data":${row.data}}`;
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64');
    try {
      const res = await receiver.request({
        path,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'webhook-id': id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': `v1,${signature}`,
          'user-agent': 'fastify-pg-outbox',
        },
        body,
      });
      await res.body.dump();
      return res.statusCode >= 200 && res.statusCode < 300;
    } catch {
      return false;
    }
  };

  /** Claims, sends and records one batch in one transaction; how many rows it claimed. */
  const deliverBatch = async () => {
    const client = await pool.connect();
    let failed;
    try {
      await client.query('BEGIN');
      const { rows } = await client.query(claim([BATCH]));
      const ok = await Promise.all(rows.map(send));
      const delivered = rows.filter((_, i) => ok[i]).map((r) => r.id);
      const undelivered = rows.filter((_, i) => !ok[i]).map((r) => r.id);
      if (delivered.length) await client.query(markDelivered([delivered]));
      if (undelivered.length) await client.query(retryLater([undelivered]));
      await client.query('COMMIT');
      return rows.length;
    } catch (error) {
      failed = error;
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release(failed);
    }
  };

  let running = false;
  let again = false;
  /** Batches until the due rows run out, and again if a commit woke the loop meanwhile. */
  const drain = async () => {
    try {
      do {
        again = false;
        while ((await deliverBatch()) === BATCH);
      } while (again);
    } catch (error) {
      // The rows stay in the outbox: the next wake or poll takes them again.
      process.stderr.write(`outbox delivery failed: ${error.message}\n`);
    } finally {
      running = false;
    }
  };
  const wake = () => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    void drain();
  };
  setInterval(wake, POLL_MS).unref();
  wake();
  return { wake };
};
