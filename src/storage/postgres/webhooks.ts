import type { Delivery, DeliveryAttempt, WebhookEndpoint, WebhookStore } from '../store.ts';
import type { PgPool } from './pg-pool.ts';

interface EndpointRow {
  id: string;
  kind: WebhookEndpoint['kind'];
  url: string;
  events: string;
  secret: string;
  previous_secret: string | null;
  previous_until: string | null;
  description: string | null;
  owner_subject: string;
  owner_roles: string;
  api_version: string | null;
  created_at: string;
  disabled_at: string | null;
  disabled_reason: string | null;
  cursor: number;
  failing_since: string | null;
}

interface DeliveryRow {
  id: number;
  endpoint_id: string;
  event_id: string;
  event_seq: number;
  url: string | null;
  state: Delivery['state'];
  attempts: number;
  next_at: string | null;
  created_at: string;
  first_status: number | null;
  first_duration_ms: number | null;
  first_error: string | null;
}

interface AttemptRow {
  at: string;
  status: number | null;
  duration_ms: number;
  error: string | null;
}

const toAttempt = (a: AttemptRow): DeliveryAttempt => ({
  at: a.at,
  ...(a.status !== null ? { status: a.status } : {}),
  durationMs: a.duration_ms,
  ...(a.error !== null ? { error: a.error } : {}),
});

/** The first attempt when the delivery row holds it (rows written before it could have none). */
const firstAttempt = (r: DeliveryRow): DeliveryAttempt[] =>
  r.first_duration_ms === null
    ? []
    : [toAttempt({ at: r.created_at, status: r.first_status, duration_ms: r.first_duration_ms, error: r.first_error })];

const toEndpoint = (r: EndpointRow): WebhookEndpoint => ({
  id: r.id,
  kind: r.kind,
  url: r.url,
  events: JSON.parse(r.events) as string[],
  secret: r.secret,
  ...(r.previous_secret ? { previousSecret: r.previous_secret } : {}),
  ...(r.previous_until ? { previousUntil: r.previous_until } : {}),
  ...(r.description ? { description: r.description } : {}),
  ownerSubject: decodeOwner(r.owner_subject),
  ownerRoles: JSON.parse(r.owner_roles) as string[],
  ...(r.api_version ? { apiVersion: r.api_version } : {}),
  createdAt: r.created_at,
  ...(r.disabled_at ? { disabledAt: r.disabled_at } : {}),
  ...(r.disabled_reason ? { disabledReason: r.disabled_reason } : {}),
  cursor: r.cursor,
  ...(r.failing_since ? { failingSince: r.failing_since } : {}),
});

const toDelivery = (r: DeliveryRow): Delivery => ({
  id: r.id,
  endpointId: r.endpoint_id,
  eventId: r.event_id,
  eventSeq: r.event_seq,
  ...(r.url ? { url: r.url } : {}),
  state: r.state,
  attempts: r.attempts,
  ...(r.next_at ? { nextAt: r.next_at } : {}),
  createdAt: r.created_at,
});

const COLUMNS: Record<string, string> = {
  url: 'url',
  events: 'events',
  secret: 'secret',
  previousSecret: 'previous_secret',
  previousUntil: 'previous_until',
  description: 'description',
  apiVersion: 'api_version',
  disabledAt: 'disabled_at',
  disabledReason: 'disabled_reason',
  failingSince: 'failing_since',
};

/**
 * PostgreSQL text holds no NUL, which the runtime's own owners use (callbacks are owned by "\0callbacks", a name no
 * caller can have): owners are stored with `\` and NUL escaped.
 */
const encodeOwner = (owner: string) => owner.replaceAll('\\', '\\\\').replaceAll('\u0000', '\\0');
const decodeOwner = (stored: string) => stored.replace(/\\(.)/g, (_, c: string) => (c === '0' ? '\u0000' : c));

const ENDPOINTS = '_ninefold_webhook_endpoints';
const DELIVERIES = '_ninefold_deliveries';

/**
 * A batch of attempts in one statement (one array per column): a first try makes its delivery row, which holds the
 * attempt (first_*; its time is created_at); a retry updates its row and logs the attempt in
 * _ninefold_delivery_attempts. Nothing is read back, so that inside the worker's transaction the statement goes out
 * with the cursor's UPDATE and COMMIT, one round trip a batch. Data-modifying CTEs all run whether or not the
 * statement reads them.
 */
const RECORD_ATTEMPTS = `
WITH input AS (
  SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::text[], $7::text[],
                       $8::text[], $9::int[], $10::int[], $11::text[])
    WITH ORDINALITY AS t(delivery_id, endpoint_id, event_id, event_seq, url, state, next_at, at, status, duration_ms, error, n)),
updated AS (
  UPDATE ${DELIVERIES} AS d SET attempts = d.attempts + 1, state = i.state, next_at = i.next_at, lease_owner = NULL, lease_until = NULL
  FROM input i WHERE d.id = i.delivery_id),
logged AS (
  INSERT INTO _ninefold_delivery_attempts (delivery_id, at, status, duration_ms, error)
  SELECT i.delivery_id, i.at, i.status, i.duration_ms, i.error FROM input i WHERE i.delivery_id IS NOT NULL ORDER BY n)
INSERT INTO ${DELIVERIES} (endpoint_id, event_id, event_seq, url, state, attempts, next_at, created_at,
                           first_status, first_duration_ms, first_error)
SELECT i.endpoint_id, i.event_id, i.event_seq, i.url, i.state, 1, i.next_at, i.at, i.status, i.duration_ms, i.error
FROM input i WHERE i.delivery_id IS NULL ORDER BY n`;

/**
 * Webhook endpoints, their cursors and deliveries, as on SQLite (sqlite/webhooks.ts). Endpoint leases and due
 * retries are taken with FOR UPDATE SKIP LOCKED: instances claiming at once each get other rows, none waits.
 */
export const postgresWebhooks = (db: PgPool): WebhookStore => ({
  async createEndpoint(e) {
    await db.rows(
      `INSERT INTO ${ENDPOINTS} (id, kind, url, events, secret, description, owner_subject, owner_roles, api_version, created_at, cursor)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [
        e.id,
        e.kind,
        e.url,
        JSON.stringify(e.events),
        e.secret,
        e.description ?? null,
        encodeOwner(e.ownerSubject),
        JSON.stringify(e.ownerRoles),
        e.apiVersion ?? null,
        e.createdAt,
        e.cursor,
      ],
    );
  },
  async getEndpoint(id) {
    const [row] = await db.rows<EndpointRow>(`SELECT * FROM ${ENDPOINTS} WHERE id = $1`, [id]);
    return row ? toEndpoint(row) : undefined;
  },
  async listEndpoints(owner) {
    const rows = await db.rows<EndpointRow>(
      `SELECT * FROM ${ENDPOINTS} WHERE owner_subject = $1 AND kind = 'webhook' ORDER BY created_at, id`,
      [encodeOwner(owner)],
    );
    return rows.map(toEndpoint);
  },
  async updateEndpoint(id, changes) {
    const entries = Object.entries(changes).filter(([k]) => COLUMNS[k]);
    if (!entries.length) return;
    const sets = entries.map(([k], i) => `${COLUMNS[k]} = $${i + 1}`).join(', ');
    const values = entries.map(([k, v]) => (k === 'events' ? JSON.stringify(v) : (v ?? null)));
    await db.rows(`UPDATE ${ENDPOINTS} SET ${sets} WHERE id = $${entries.length + 1}`, [...values, id]);
  },
  async deleteEndpoint(id) {
    await db.transaction(async () => {
      await db.rows(
        `UPDATE ${DELIVERIES} SET state = 'failed', next_at = NULL WHERE endpoint_id = $1 AND state = 'pending'`,
        [id],
      );
      await db.rows(`DELETE FROM ${ENDPOINTS} WHERE id = $1`, [id]);
    });
  },
  async leaseEndpoints(owner, now, until) {
    const rows = await db.rows<EndpointRow>(
      `UPDATE ${ENDPOINTS} SET lease_owner = $1, lease_until = $2
       WHERE id IN (SELECT id FROM ${ENDPOINTS}
                    WHERE disabled_at IS NULL AND (lease_owner = $1 OR lease_until IS NULL OR lease_until <= $3)
                    FOR UPDATE SKIP LOCKED)
       RETURNING *`,
      [owner, until, now],
    );
    return rows.map(toEndpoint);
  },
  async releaseEndpoints(owner) {
    await db.rows(`UPDATE ${ENDPOINTS} SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = $1`, [owner]);
  },
  async moveCursor(endpointId, seq) {
    await db.rows(`UPDATE ${ENDPOINTS} SET cursor = $1 WHERE id = $2`, [seq, endpointId]);
  },
  async advanceCursor(endpointId, owner, seq) {
    // Inside the worker's transaction it goes out with the COMMIT (see PgPool.write).
    await db.write(`UPDATE ${ENDPOINTS} SET cursor = $1 WHERE id = $2 AND lease_owner = $3 AND cursor < $1`, [
      seq,
      endpointId,
      owner,
    ]);
  },
  async recordAttempts(records) {
    if (!records.length) return;
    await db.write(RECORD_ATTEMPTS, [
      records.map((r) => r.deliveryId ?? null),
      records.map((r) => r.endpointId),
      records.map((r) => r.eventId),
      records.map((r) => r.eventSeq),
      records.map((r) => r.url ?? null),
      records.map((r) => r.next.state),
      records.map((r) => (r.next.state === 'pending' ? r.next.at : null)),
      records.map((r) => r.attempt.at),
      records.map((r) => r.attempt.status ?? null),
      records.map((r) => Math.round(r.attempt.durationMs)),
      records.map((r) => r.attempt.error ?? null),
    ]);
  },
  async claimDue(now, owner, leaseMs, limit) {
    const at = now.toISOString();
    const rows = await db.rows<DeliveryRow>(
      `UPDATE ${DELIVERIES} SET lease_owner = $1, lease_until = $2
       WHERE id IN (SELECT id FROM ${DELIVERIES}
                    WHERE state = 'pending' AND next_at <= $3 AND (lease_until IS NULL OR lease_until <= $3)
                    ORDER BY next_at, id LIMIT $4 FOR UPDATE SKIP LOCKED)
       RETURNING *`,
      [owner, new Date(now.getTime() + leaseMs).toISOString(), at, limit],
    );
    return rows.map(toDelivery).sort((a, b) => (a.nextAt ?? '').localeCompare(b.nextAt ?? '') || a.id - b.id);
  },
  async listDeliveries(endpointId, limit) {
    const rows = await db.rows<DeliveryRow>(
      `SELECT * FROM ${DELIVERIES} WHERE endpoint_id = $1 ORDER BY id DESC LIMIT $2`,
      [endpointId, limit],
    );
    const attempts = await db.rows<AttemptRow & { delivery_id: number }>(
      'SELECT delivery_id, at, status, duration_ms, error FROM _ninefold_delivery_attempts WHERE delivery_id = ANY($1::bigint[]) ORDER BY pk',
      [rows.map((r) => r.id)],
    );
    return rows.map((row) => ({
      ...toDelivery(row),
      log: [...firstAttempt(row), ...attempts.filter((a) => a.delivery_id === row.id).map(toAttempt)],
    }));
  },
  async getDelivery(id) {
    const [row] = await db.rows<DeliveryRow>(`SELECT * FROM ${DELIVERIES} WHERE id = $1`, [id]);
    return row ? toDelivery(row) : undefined;
  },
  async retry(id, at) {
    await db.rows(
      `UPDATE ${DELIVERIES} SET state = 'pending', next_at = $1, lease_owner = NULL, lease_until = NULL WHERE id = $2`,
      [at, id],
    );
  },
});
