import type { Database } from 'better-sqlite3';
import type { Delivery, WebhookEndpoint, WebhookStore } from '../store.ts';

interface EndpointRow {
  id: string;
  url: string;
  events: string;
  secret: string;
  previous_secret: string | null;
  previous_until: string | null;
  description: string | null;
  owner_subject: string;
  owner_roles: string;
  created_at: string;
  disabled_at: string | null;
  disabled_reason: string | null;
}

interface DeliveryRow {
  id: number;
  endpoint_id: string;
  event_id: string;
  state: Delivery['state'];
  attempts: number;
  next_at: string | null;
  created_at: string;
}

const toEndpoint = (r: EndpointRow): WebhookEndpoint => ({
  id: r.id,
  url: r.url,
  events: JSON.parse(r.events) as string[],
  secret: r.secret,
  ...(r.previous_secret ? { previousSecret: r.previous_secret } : {}),
  ...(r.previous_until ? { previousUntil: r.previous_until } : {}),
  ...(r.description ? { description: r.description } : {}),
  ownerSubject: r.owner_subject,
  ownerRoles: JSON.parse(r.owner_roles) as string[],
  createdAt: r.created_at,
  ...(r.disabled_at ? { disabledAt: r.disabled_at } : {}),
  ...(r.disabled_reason ? { disabledReason: r.disabled_reason } : {}),
});

const toDelivery = (r: DeliveryRow): Delivery => ({
  id: r.id,
  endpointId: r.endpoint_id,
  eventId: r.event_id,
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
  disabledAt: 'disabled_at',
  disabledReason: 'disabled_reason',
};

/** Webhook endpoints and their deliveries; deliveries are queued in the transaction of their event. */
export const sqliteWebhooks = (db: Database): WebhookStore => {
  db.exec(`CREATE TABLE IF NOT EXISTS _ninefold_webhook_endpoints (
    id TEXT PRIMARY KEY, url TEXT NOT NULL, events TEXT NOT NULL, secret TEXT NOT NULL, previous_secret TEXT,
    previous_until TEXT, description TEXT, owner_subject TEXT NOT NULL, owner_roles TEXT NOT NULL,
    created_at TEXT NOT NULL, disabled_at TEXT, disabled_reason TEXT) STRICT;
  CREATE TABLE IF NOT EXISTS _ninefold_deliveries (
    id INTEGER PRIMARY KEY AUTOINCREMENT, endpoint_id TEXT NOT NULL, event_id TEXT NOT NULL, state TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0, next_at TEXT, lease_owner TEXT, lease_until TEXT, created_at TEXT NOT NULL) STRICT;
  CREATE INDEX IF NOT EXISTS _ninefold_deliveries_due ON _ninefold_deliveries (state, next_at);
  CREATE INDEX IF NOT EXISTS _ninefold_deliveries_by_endpoint ON _ninefold_deliveries (endpoint_id, id);
  CREATE TABLE IF NOT EXISTS _ninefold_delivery_attempts (
    delivery_id INTEGER NOT NULL, at TEXT NOT NULL, status INTEGER, duration_ms INTEGER NOT NULL, error TEXT) STRICT;
  CREATE INDEX IF NOT EXISTS _ninefold_delivery_attempts_by_delivery ON _ninefold_delivery_attempts (delivery_id);`);
  const insertEndpoint = db.prepare(`INSERT INTO _ninefold_webhook_endpoints
    (id, url, events, secret, description, owner_subject, owner_roles, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`);
  const getEndpoint = db.prepare('SELECT * FROM _ninefold_webhook_endpoints WHERE id = ?');
  const allEndpoints = db.prepare('SELECT * FROM _ninefold_webhook_endpoints ORDER BY created_at, id');
  const ownEndpoints = db.prepare(
    'SELECT * FROM _ninefold_webhook_endpoints WHERE owner_subject = ? ORDER BY created_at, id',
  );
  const liveEndpoints = db.prepare('SELECT * FROM _ninefold_webhook_endpoints WHERE disabled_at IS NULL');
  const deleteEndpoint = db.prepare('DELETE FROM _ninefold_webhook_endpoints WHERE id = ?');
  const deleteDeliveries = db.prepare(
    "UPDATE _ninefold_deliveries SET state = 'failed', next_at = NULL WHERE endpoint_id = ? AND state = 'pending'",
  );
  const enqueue = db.prepare(
    "INSERT INTO _ninefold_deliveries (endpoint_id, event_id, state, next_at, created_at) VALUES (?, ?, 'pending', ?, ?)",
  );
  // Due deliveries in the order they are due (index _ninefold_deliveries_due); the worker spreads them over
  // endpoints and caps how many run at once per endpoint.
  const due = db.prepare(`SELECT * FROM _ninefold_deliveries
    WHERE state = 'pending' AND next_at <= ? AND (lease_until IS NULL OR lease_until <= ?)
    ORDER BY next_at, id LIMIT ?`);
  const lease = db.prepare(
    'UPDATE _ninefold_deliveries SET lease_owner = ?, lease_until = ? WHERE id = ? AND (lease_until IS NULL OR lease_until <= ?)',
  );
  const logAttempt = db.prepare(
    'INSERT INTO _ninefold_delivery_attempts (delivery_id, at, status, duration_ms, error) VALUES (?, ?, ?, ?, ?)',
  );
  const reschedule = db.prepare(
    'UPDATE _ninefold_deliveries SET attempts = attempts + 1, state = ?, next_at = ?, lease_owner = NULL, lease_until = NULL WHERE id = ?',
  );
  const byEndpoint = db.prepare('SELECT * FROM _ninefold_deliveries WHERE endpoint_id = ? ORDER BY id DESC LIMIT ?');
  const attemptsOf = db.prepare(
    'SELECT at, status, duration_ms, error FROM _ninefold_delivery_attempts WHERE delivery_id = ? ORDER BY rowid',
  );
  const getDelivery = db.prepare('SELECT * FROM _ninefold_deliveries WHERE id = ?');
  const retry = db.prepare(
    "UPDATE _ninefold_deliveries SET state = 'pending', next_at = ?, lease_owner = NULL, lease_until = NULL WHERE id = ?",
  );
  // Live endpoints are read for every event: cached until this store writes one or another connection commits
  // (PRAGMA data_version, looked at once per turn of the event loop).
  const dataVersion = db.prepare('PRAGMA data_version').pluck();
  let live: WebhookEndpoint[] | undefined;
  let seenVersion: unknown;
  let checkedThisTurn = false;
  const nextTurn = () => {
    checkedThisTurn = false;
  };
  const fresh = () => {
    if (checkedThisTurn) return;
    checkedThisTurn = true;
    setImmediate(nextTurn);
    const version = dataVersion.get();
    if (version !== seenVersion) {
      seenVersion = version;
      live = undefined;
    }
  };
  const changed = () => {
    live = undefined;
  };
  return {
    async createEndpoint(e) {
      changed();
      insertEndpoint.run(
        e.id,
        e.url,
        JSON.stringify(e.events),
        e.secret,
        e.description ?? null,
        e.ownerSubject,
        JSON.stringify(e.ownerRoles),
        e.createdAt,
      );
    },
    async getEndpoint(id) {
      const row = getEndpoint.get(id) as EndpointRow | undefined;
      return row ? toEndpoint(row) : undefined;
    },
    async listEndpoints(owner) {
      const rows = (owner === undefined ? allEndpoints.all() : ownEndpoints.all(owner)) as EndpointRow[];
      return rows.map(toEndpoint);
    },
    async updateEndpoint(id, changes) {
      changed();
      const entries = Object.entries(changes).filter(([k]) => COLUMNS[k]);
      if (!entries.length) return;
      const sets = entries.map(([k]) => `${COLUMNS[k]} = ?`).join(', ');
      const values = entries.map(([k, v]) => (k === 'events' ? JSON.stringify(v) : (v ?? null)));
      db.prepare(`UPDATE _ninefold_webhook_endpoints SET ${sets} WHERE id = ?`).run(...values, id);
    },
    async deleteEndpoint(id) {
      changed();
      deleteDeliveries.run(id);
      deleteEndpoint.run(id);
    },
    async liveEndpoints() {
      fresh();
      live ??= (liveEndpoints.all() as EndpointRow[]).map(toEndpoint);
      return live;
    },
    async enqueue(endpointId, eventId, dueAt) {
      enqueue.run(endpointId, eventId, dueAt, dueAt);
    },
    async claimDue(now, owner, leaseMs, limit) {
      const at = now.toISOString();
      const until = new Date(now.getTime() + leaseMs).toISOString();
      const claimed: Delivery[] = [];
      for (const row of due.all(at, at, limit) as DeliveryRow[]) {
        if (lease.run(owner, until, row.id, at).changes === 1) claimed.push(toDelivery(row));
      }
      return claimed;
    },
    async recordAttempt(id, attempt, next) {
      logAttempt.run(id, attempt.at, attempt.status ?? null, Math.round(attempt.durationMs), attempt.error ?? null);
      reschedule.run(next.state, next.state === 'pending' ? next.at : null, id);
    },
    async listDeliveries(endpointId, limit) {
      return (byEndpoint.all(endpointId, limit) as DeliveryRow[]).map((row) => ({
        ...toDelivery(row),
        log: (
          attemptsOf.all(row.id) as Array<{
            at: string;
            status: number | null;
            duration_ms: number;
            error: string | null;
          }>
        ).map((a) => ({
          at: a.at,
          ...(a.status !== null ? { status: a.status } : {}),
          durationMs: a.duration_ms,
          ...(a.error !== null ? { error: a.error } : {}),
        })),
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
