import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStore, type Store } from '../src/storage/index.ts';
import { PostgresStore } from '../src/storage/postgres/postgres-store.ts';
import { dropSchemas, freshPgUrl, pgExec, schemaOf } from './helpers/postgres.ts';
import { contractPlan, tempDir } from './storage/contract.ts';

// A delivery's first attempt is now held in its row; databases written before keep every attempt in
// _ninefold_delivery_attempts. The log the API shows must read the same from both, and a retry of an old delivery
// must add to its log, on both stores. Each backend writes the tables as the version before this change made them.

const iso = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms).toISOString();

/** The delivery tables as they were, one delivery (two attempts, pending) and one endpoint, in the old layout. */
const OLD_ROWS = {
  endpoint: ['ep_old', 'webhook', 'https://example.com/hook', '[]', 'whsec_x', 'old', '[]', iso(0), 5],
  delivery: [1, 'ep_old', 'evt_1', 1, 'pending', 2, iso(10_000), iso(1)],
  attempts: [
    [1, iso(1), 500, 12, null],
    [1, iso(2_000), null, 3, 'ECONNREFUSED'],
  ],
};

interface OldDatabase {
  /** A database holding the old tables and rows, and the store opened over it (migrated). */
  open(): Promise<{ store: Store; indexes: () => Promise<string[]> }>;
}

const sqlite: OldDatabase = {
  async open() {
    const path = join(tempDir(), 'old.db');
    const db = new Database(path);
    db.exec(`CREATE TABLE _ninefold_webhook_endpoints (
        id TEXT PRIMARY KEY, kind TEXT NOT NULL DEFAULT 'webhook', url TEXT NOT NULL, events TEXT NOT NULL,
        secret TEXT NOT NULL, previous_secret TEXT, previous_until TEXT, description TEXT, owner_subject TEXT NOT NULL,
        owner_roles TEXT NOT NULL, api_version TEXT, created_at TEXT NOT NULL, disabled_at TEXT, disabled_reason TEXT,
        cursor INTEGER NOT NULL DEFAULT 0, failing_since TEXT, lease_owner TEXT, lease_until TEXT) STRICT;
      CREATE TABLE _ninefold_deliveries (
        id INTEGER PRIMARY KEY AUTOINCREMENT, endpoint_id TEXT NOT NULL, event_id TEXT NOT NULL,
        event_seq INTEGER NOT NULL DEFAULT 0, url TEXT, state TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,
        next_at TEXT, lease_owner TEXT, lease_until TEXT, created_at TEXT NOT NULL) STRICT;
      CREATE INDEX _ninefold_deliveries_due ON _ninefold_deliveries (state, next_at);
      CREATE INDEX _ninefold_deliveries_by_endpoint ON _ninefold_deliveries (endpoint_id, id);
      CREATE TABLE _ninefold_delivery_attempts (
        delivery_id INTEGER NOT NULL, at TEXT NOT NULL, status INTEGER, duration_ms INTEGER NOT NULL, error TEXT) STRICT;
      CREATE INDEX _ninefold_delivery_attempts_by_delivery ON _ninefold_delivery_attempts (delivery_id);`);
    db.prepare(
      `INSERT INTO _ninefold_webhook_endpoints (id, kind, url, events, secret, owner_subject, owner_roles, created_at, cursor)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(...OLD_ROWS.endpoint);
    db.prepare(
      `INSERT INTO _ninefold_deliveries (id, endpoint_id, event_id, event_seq, state, attempts, next_at, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(...OLD_ROWS.delivery);
    const log = db.prepare('INSERT INTO _ninefold_delivery_attempts VALUES (?, ?, ?, ?, ?)');
    for (const a of OLD_ROWS.attempts) log.run(...a);
    db.close();
    const store = new SqliteStore({ path });
    await store.migrate(contractPlan());
    const indexes = async () => {
      const check = new Database(path, { readonly: true });
      try {
        return check
          .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = '_ninefold_deliveries'")
          .pluck()
          .all() as string[];
      } finally {
        check.close();
      }
    };
    return { store, indexes };
  },
};

const postgres: OldDatabase = {
  async open() {
    const url = freshPgUrl();
    const schema = `"${schemaOf(url)}"`;
    await pgExec(`CREATE SCHEMA ${schema};
      CREATE TABLE ${schema}._ninefold_webhook_endpoints (
        id text COLLATE "C" PRIMARY KEY, kind text COLLATE "C" NOT NULL DEFAULT 'webhook', url text COLLATE "C" NOT NULL, events text COLLATE "C" NOT NULL,
        secret text COLLATE "C" NOT NULL, previous_secret text COLLATE "C", previous_until text COLLATE "C", description text COLLATE "C", owner_subject text COLLATE "C" NOT NULL,
        owner_roles text COLLATE "C" NOT NULL, api_version text COLLATE "C", created_at text COLLATE "C" NOT NULL, disabled_at text COLLATE "C", disabled_reason text COLLATE "C",
        cursor bigint NOT NULL DEFAULT 0, failing_since text COLLATE "C", lease_owner text COLLATE "C", lease_until text COLLATE "C");
      CREATE TABLE ${schema}._ninefold_deliveries (
        id bigserial PRIMARY KEY, endpoint_id text COLLATE "C" NOT NULL, event_id text COLLATE "C" NOT NULL,
        event_seq bigint NOT NULL DEFAULT 0, url text COLLATE "C", state text COLLATE "C" NOT NULL, attempts integer NOT NULL DEFAULT 0,
        next_at text COLLATE "C", lease_owner text COLLATE "C", lease_until text COLLATE "C", created_at text COLLATE "C" NOT NULL);
      CREATE INDEX _ninefold_deliveries_due ON ${schema}._ninefold_deliveries (state, next_at);
      CREATE INDEX _ninefold_deliveries_by_endpoint ON ${schema}._ninefold_deliveries (endpoint_id, id);
      CREATE TABLE ${schema}._ninefold_delivery_attempts (
        pk bigserial PRIMARY KEY, delivery_id bigint NOT NULL, at text COLLATE "C" NOT NULL, status integer, duration_ms integer NOT NULL,
        error text COLLATE "C");
      CREATE INDEX _ninefold_delivery_attempts_by_delivery ON ${schema}._ninefold_delivery_attempts (delivery_id);`);
    await pgExec(
      `INSERT INTO ${schema}._ninefold_webhook_endpoints (id, kind, url, events, secret, owner_subject, owner_roles, created_at, cursor)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      OLD_ROWS.endpoint,
    );
    await pgExec(
      `INSERT INTO ${schema}._ninefold_deliveries (id, endpoint_id, event_id, event_seq, state, attempts, next_at, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      OLD_ROWS.delivery,
    );
    // The sequence moves on past the row written with its id, as the old worker's nextval() would have.
    await pgExec(`SELECT setval('${schema}._ninefold_deliveries_id_seq', 1)`);
    for (const a of OLD_ROWS.attempts)
      await pgExec(
        `INSERT INTO ${schema}._ninefold_delivery_attempts (delivery_id, at, status, duration_ms, error) VALUES ($1, $2, $3, $4, $5)`,
        a,
      );
    const store = new PostgresStore({ url });
    await store.migrate(contractPlan());
    const indexes = async () =>
      (
        await pgExec('SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = $2', [
          schemaOf(url),
          '_ninefold_deliveries',
        ])
      ).rows.map((r) => r.indexname as string);
    return { store, indexes };
  },
};

afterAll(dropSchemas);

describe.each([
  ['sqlite', sqlite],
  ['postgres', postgres],
])('webhook deliveries written before first attempts were held in their row (%s)', (_name, old) => {
  it('list with the same log, take further attempts, and sit beside new deliveries', async () => {
    const { store, indexes } = await old.open();
    try {
      const oldLog = [
        { at: iso(1), status: 500, durationMs: 12 },
        { at: iso(2_000), durationMs: 3, error: 'ECONNREFUSED' },
      ];
      const [listed] = await store.webhooks.listDeliveries('ep_old', 10);
      expect(listed).toMatchObject({ id: 1, eventId: 'evt_1', state: 'pending', attempts: 2, log: oldLog });

      // Still due, and claimed by the due index that replaced the old one.
      const [claimed] = await store.webhooks.claimDue(new Date(iso(20_000)), 'w', 30_000, 10);
      expect(claimed).toMatchObject({ id: 1, attempts: 2 });
      expect(await indexes()).not.toContain('_ninefold_deliveries_due');
      expect(await indexes()).toContain('_ninefold_deliveries_pending');

      // The old delivery's third attempt and a new delivery's first, in one batch.
      await store.webhooks.recordAttempts([
        {
          endpointId: 'ep_old',
          eventId: 'evt_1',
          eventSeq: 1,
          deliveryId: 1,
          attempt: { at: iso(20_000), status: 200, durationMs: 4 },
          next: { state: 'delivered' },
        },
        {
          endpointId: 'ep_old',
          eventId: 'evt_2',
          eventSeq: 2,
          attempt: { at: iso(20_001), status: 503, durationMs: 7 },
          next: { state: 'pending', at: iso(30_000) },
        },
      ]);
      const after = await store.webhooks.listDeliveries('ep_old', 10);
      expect(after.map((d) => [d.eventId, d.state, d.attempts])).toEqual([
        ['evt_2', 'pending', 1],
        ['evt_1', 'delivered', 3],
      ]);
      expect(after[0]?.id).toBeGreaterThan(1);
      expect(after[1]?.log).toEqual([...oldLog, { at: iso(20_000), status: 200, durationMs: 4 }]);
      expect(after[0]?.log).toEqual([{ at: iso(20_001), status: 503, durationMs: 7 }]);
    } finally {
      await store.close();
    }
  });
});
