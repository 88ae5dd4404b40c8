import type { Database } from 'better-sqlite3';
import type { Delivery, DeliveryAttempt, WebhookEndpoint, WebhookStore } from '../store.ts';
import { sqliteDialect } from './sqlite-dialect.ts';

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
  ownerSubject: r.owner_subject,
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

const SCHEMA = `CREATE TABLE IF NOT EXISTS _ninefold_webhook_endpoints (
    id TEXT PRIMARY KEY, kind TEXT NOT NULL DEFAULT 'webhook', url TEXT NOT NULL, events TEXT NOT NULL,
    secret TEXT NOT NULL, previous_secret TEXT, previous_until TEXT, description TEXT, owner_subject TEXT NOT NULL,
    owner_roles TEXT NOT NULL, api_version TEXT, created_at TEXT NOT NULL, disabled_at TEXT, disabled_reason TEXT,
    cursor INTEGER NOT NULL DEFAULT 0, failing_since TEXT, lease_owner TEXT, lease_until TEXT) STRICT;
  CREATE TABLE IF NOT EXISTS _ninefold_deliveries (
    id INTEGER PRIMARY KEY AUTOINCREMENT, endpoint_id TEXT NOT NULL, event_id TEXT NOT NULL,
    event_seq INTEGER NOT NULL DEFAULT 0, url TEXT, state TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,
    next_at TEXT, lease_owner TEXT, lease_until TEXT, created_at TEXT NOT NULL,
    first_status INTEGER, first_duration_ms INTEGER, first_error TEXT) STRICT;
  CREATE INDEX IF NOT EXISTS _ninefold_deliveries_by_endpoint ON _ninefold_deliveries (endpoint_id, id);
  CREATE TABLE IF NOT EXISTS _ninefold_delivery_attempts (
    delivery_id INTEGER NOT NULL, at TEXT NOT NULL, status INTEGER, duration_ms INTEGER NOT NULL, error TEXT) STRICT;
  CREATE INDEX IF NOT EXISTS _ninefold_delivery_attempts_by_delivery ON _ninefold_delivery_attempts (delivery_id);`;

/** Columns added since the tables were first made: added in place to databases made before. */
const ADDED: Array<[table: string, column: string, definition: string]> = [
  ['_ninefold_webhook_endpoints', 'kind', "TEXT NOT NULL DEFAULT 'webhook'"],
  ['_ninefold_webhook_endpoints', 'api_version', 'TEXT'],
  ['_ninefold_webhook_endpoints', 'cursor', 'INTEGER NOT NULL DEFAULT 0'],
  ['_ninefold_webhook_endpoints', 'failing_since', 'TEXT'],
  ['_ninefold_webhook_endpoints', 'lease_owner', 'TEXT'],
  ['_ninefold_webhook_endpoints', 'lease_until', 'TEXT'],
  ['_ninefold_deliveries', 'event_seq', 'INTEGER NOT NULL DEFAULT 0'],
  ['_ninefold_deliveries', 'url', 'TEXT'],
  ['_ninefold_deliveries', 'first_status', 'INTEGER'],
  ['_ninefold_deliveries', 'first_duration_ms', 'INTEGER'],
  ['_ninefold_deliveries', 'first_error', 'TEXT'],
];

const upgrade = (db: Database) => {
  for (const [table, column, definition] of ADDED) {
    const have = db.prepare(`SELECT name FROM pragma_table_info('${table}')`).pluck().all() as string[];
    if (!have.includes(column)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${definition}`);
  }
  // Only pending deliveries are ever looked for by due time: delivered and failed ones stay out of the index.
  db.exec(`DROP INDEX IF EXISTS _ninefold_deliveries_due;
    CREATE INDEX IF NOT EXISTS _ninefold_deliveries_pending ON _ninefold_deliveries (next_at, id) WHERE state = 'pending';`);
};

/**
 * Webhook endpoints (and the callbacks of each resource), their cursors into the outbox, and the deliveries
 * made: a delivery row is written by the worker when it first tries an event, so the write path of a change
 * never touches these tables.
 */
export const sqliteWebhooks = (db: Database): WebhookStore => {
  db.exec(SCHEMA);
  upgrade(db);
  const insertEndpoint = db.prepare(`INSERT INTO _ninefold_webhook_endpoints
    (id, kind, url, events, secret, description, owner_subject, owner_roles, api_version, created_at, cursor)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const getEndpoint = db.prepare('SELECT * FROM _ninefold_webhook_endpoints WHERE id = ?');
  const ownEndpoints = db.prepare(
    "SELECT * FROM _ninefold_webhook_endpoints WHERE owner_subject = ? AND kind = 'webhook' ORDER BY created_at, id",
  );
  const deleteEndpoint = db.prepare('DELETE FROM _ninefold_webhook_endpoints WHERE id = ?');
  const dropPending = db.prepare(
    "UPDATE _ninefold_deliveries SET state = 'failed', next_at = NULL WHERE endpoint_id = ? AND state = 'pending'",
  );
  const lease = db.prepare(`UPDATE _ninefold_webhook_endpoints SET lease_owner = ?, lease_until = ?
    WHERE disabled_at IS NULL AND (lease_owner = ? OR lease_until IS NULL OR lease_until <= ?) RETURNING *`);
  const release = db.prepare(
    'UPDATE _ninefold_webhook_endpoints SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = ?',
  );
  const advance = db.prepare(
    'UPDATE _ninefold_webhook_endpoints SET cursor = ? WHERE id = ? AND lease_owner = ? AND cursor < ?',
  );
  const move = db.prepare('UPDATE _ninefold_webhook_endpoints SET cursor = ? WHERE id = ?');
  const insertDelivery = db.prepare(`INSERT INTO _ninefold_deliveries
    (endpoint_id, event_id, event_seq, url, state, attempts, next_at, created_at, first_status, first_duration_ms, first_error)
    VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?)`);
  const updateDelivery = db.prepare(
    'UPDATE _ninefold_deliveries SET attempts = attempts + 1, state = ?, next_at = ?, lease_owner = NULL, lease_until = NULL WHERE id = ?',
  );
  const logAttempt = db.prepare(
    'INSERT INTO _ninefold_delivery_attempts (delivery_id, at, status, duration_ms, error) VALUES (?, ?, ?, ?, ?)',
  );
  const due = db.prepare(`SELECT * FROM _ninefold_deliveries
    WHERE state = 'pending' AND next_at <= ? AND (lease_until IS NULL OR lease_until <= ?)
    ORDER BY next_at, id LIMIT ${sqliteDialect.limitMarker}`);
  const claim = db.prepare(
    'UPDATE _ninefold_deliveries SET lease_owner = ?, lease_until = ? WHERE id = ? AND (lease_until IS NULL OR lease_until <= ?)',
  );
  const byEndpoint = db.prepare(
    `SELECT * FROM _ninefold_deliveries WHERE endpoint_id = ? ORDER BY id DESC LIMIT ${sqliteDialect.limitMarker}`,
  );
  const attemptsOf = db.prepare(
    'SELECT at, status, duration_ms, error FROM _ninefold_delivery_attempts WHERE delivery_id = ? ORDER BY rowid',
  );
  const getDelivery = db.prepare('SELECT * FROM _ninefold_deliveries WHERE id = ?');
  const retry = db.prepare(
    "UPDATE _ninefold_deliveries SET state = 'pending', next_at = ?, lease_owner = NULL, lease_until = NULL WHERE id = ?",
  );
  return {
    async createEndpoint(e) {
      insertEndpoint.run(
        e.id,
        e.kind,
        e.url,
        JSON.stringify(e.events),
        e.secret,
        e.description ?? null,
        e.ownerSubject,
        JSON.stringify(e.ownerRoles),
        e.apiVersion ?? null,
        e.createdAt,
        e.cursor,
      );
    },
    async getEndpoint(id) {
      const row = getEndpoint.get(id) as EndpointRow | undefined;
      return row ? toEndpoint(row) : undefined;
    },
    async listEndpoints(owner) {
      return (ownEndpoints.all(owner) as EndpointRow[]).map(toEndpoint);
    },
    async updateEndpoint(id, changes) {
      const entries = Object.entries(changes).filter(([k]) => COLUMNS[k]);
      if (!entries.length) return;
      const sets = entries.map(([k]) => `${COLUMNS[k]} = ?`).join(', ');
      const values = entries.map(([k, v]) => (k === 'events' ? JSON.stringify(v) : (v ?? null)));
      db.prepare(`UPDATE _ninefold_webhook_endpoints SET ${sets} WHERE id = ?`).run(...values, id);
    },
    async deleteEndpoint(id) {
      dropPending.run(id);
      deleteEndpoint.run(id);
    },
    async leaseEndpoints(owner, now, until) {
      return (lease.all(owner, until, owner, now) as EndpointRow[]).map(toEndpoint);
    },
    async releaseEndpoints(owner) {
      release.run(owner);
    },
    async moveCursor(endpointId, seq) {
      move.run(seq, endpointId);
    },
    async advanceCursor(endpointId, owner, seq) {
      advance.run(seq, endpointId, owner, seq);
    },
    async recordAttempts(records) {
      for (const r of records) {
        const nextAt = r.next.state === 'pending' ? r.next.at : null;
        const a = r.attempt;
        const [status, durationMs, error] = [a.status ?? null, Math.round(a.durationMs), a.error ?? null];
        if (r.deliveryId === undefined) {
          // The first attempt is held in the delivery row (its time is created_at).
          insertDelivery.run(
            r.endpointId,
            r.eventId,
            r.eventSeq,
            r.url ?? null,
            r.next.state,
            nextAt,
            a.at,
            status,
            durationMs,
            error,
          );
        } else {
          updateDelivery.run(r.next.state, nextAt, r.deliveryId);
          logAttempt.run(r.deliveryId, a.at, status, durationMs, error);
        }
      }
    },
    async claimDue(now, owner, leaseMs, limit) {
      const at = now.toISOString();
      const until = new Date(now.getTime() + leaseMs).toISOString();
      const claimed: Delivery[] = [];
      for (const row of due.all(at, at, limit) as DeliveryRow[]) {
        if (claim.run(owner, until, row.id, at).changes === 1) claimed.push(toDelivery(row));
      }
      return claimed;
    },
    async listDeliveries(endpointId, limit) {
      return (byEndpoint.all(endpointId, limit) as DeliveryRow[]).map((row) => ({
        ...toDelivery(row),
        log: [...firstAttempt(row), ...(attemptsOf.all(row.id) as AttemptRow[]).map(toAttempt)],
      }));
    },
    async getDelivery(id) {
      const row = getDelivery.get(id) as DeliveryRow | undefined;
      return row ? toDelivery(row) : undefined;
    },
    async retry(id, at) {
      retry.run(at, id);
    },
  };
};
