/**
 * The store's own tables, the same as SQLite's in meaning (sqlite/*.ts), created once per schema. Times are ISO text,
 * as on SQLite, so that they compare and read back the same; text compares byte for byte (COLLATE "C"), as on SQLite.
 */
export const SYSTEM_TABLES = `
CREATE TABLE IF NOT EXISTS _ninefold_idempotency (
  caller text COLLATE "C" NOT NULL, key text COLLATE "C" NOT NULL, fingerprint text COLLATE "C" NOT NULL, status integer NOT NULL,
  headers text COLLATE "C" NOT NULL, body text COLLATE "C" NOT NULL, created_at text COLLATE "C" NOT NULL, PRIMARY KEY (caller, key));
CREATE INDEX IF NOT EXISTS _ninefold_idempotency_created ON _ninefold_idempotency (created_at);
CREATE TABLE IF NOT EXISTS _ninefold_sequences (name text COLLATE "C" PRIMARY KEY, value bigint NOT NULL);

CREATE TABLE IF NOT EXISTS _ninefold_history (
  seq bigserial PRIMARY KEY, resource text COLLATE "C" NOT NULL, record_id text COLLATE "C" NOT NULL, transition text COLLATE "C" NOT NULL,
  from_state text COLLATE "C" NOT NULL, to_state text COLLATE "C" NOT NULL, at text COLLATE "C" NOT NULL, input text COLLATE "C" NOT NULL, actor text COLLATE "C" NOT NULL);
CREATE INDEX IF NOT EXISTS _ninefold_history__record ON _ninefold_history (resource, record_id, seq);

CREATE TABLE IF NOT EXISTS _ninefold_timers (
  id bigserial PRIMARY KEY, resource text COLLATE "C" NOT NULL, record_id text COLLATE "C" NOT NULL, transition text COLLATE "C" NOT NULL,
  from_state text COLLATE "C" NOT NULL, due_at text COLLATE "C" NOT NULL, owner text COLLATE "C", lease_until text COLLATE "C");
CREATE INDEX IF NOT EXISTS _ninefold_timers__due ON _ninefold_timers (due_at);
CREATE INDEX IF NOT EXISTS _ninefold_timers__record ON _ninefold_timers (resource, record_id);

CREATE TABLE IF NOT EXISTS _ninefold_counters (key text COLLATE "C" PRIMARY KEY, count integer NOT NULL, reset_at bigint NOT NULL);

CREATE TABLE IF NOT EXISTS _ninefold_version_usage (
  version text COLLATE "C" NOT NULL, caller text COLLATE "C" NOT NULL, day text COLLATE "C" NOT NULL,
  count bigint NOT NULL, last_seen text COLLATE "C" NOT NULL, PRIMARY KEY (version, caller, day));

CREATE TABLE IF NOT EXISTS _ninefold_api_keys (
  id text COLLATE "C" PRIMARY KEY, secret_hash text COLLATE "C" NOT NULL, subject text COLLATE "C" NOT NULL, roles text COLLATE "C" NOT NULL,
  created_at text COLLATE "C" NOT NULL, expires_at text COLLATE "C", revoked_at text COLLATE "C", api_version text COLLATE "C");
ALTER TABLE _ninefold_api_keys ADD COLUMN IF NOT EXISTS api_version text COLLATE "C";
-- A counter every key write raises in its own statement (api-keys.ts): an instance reads it before it trusts a key
-- it remembers, so a revocation committed anywhere is seen without waiting for its notification.
CREATE TABLE IF NOT EXISTS _ninefold_key_changes (id integer PRIMARY KEY CHECK (id = 1), n bigint NOT NULL);
INSERT INTO _ninefold_key_changes (id, n) VALUES (1, 0) ON CONFLICT (id) DO NOTHING;

CREATE TABLE IF NOT EXISTS _ninefold_events (
  pk bigserial PRIMARY KEY, seq bigint UNIQUE, type text COLLATE "C" NOT NULL, time text COLLATE "C" NOT NULL,
  resource text COLLATE "C", record_id text COLLATE "C", data text COLLATE "C" NOT NULL);
CREATE INDEX IF NOT EXISTS _ninefold_events__unsequenced ON _ninefold_events (pk) WHERE seq IS NULL;

CREATE TABLE IF NOT EXISTS _ninefold_webhook_endpoints (
  id text COLLATE "C" PRIMARY KEY, kind text COLLATE "C" NOT NULL DEFAULT 'webhook', url text COLLATE "C" NOT NULL, events text COLLATE "C" NOT NULL,
  secret text COLLATE "C" NOT NULL, previous_secret text COLLATE "C", previous_until text COLLATE "C", description text COLLATE "C", owner_subject text COLLATE "C" NOT NULL,
  owner_roles text COLLATE "C" NOT NULL, api_version text COLLATE "C", created_at text COLLATE "C" NOT NULL, disabled_at text COLLATE "C", disabled_reason text COLLATE "C",
  cursor bigint NOT NULL DEFAULT 0, failing_since text COLLATE "C", lease_owner text COLLATE "C", lease_until text COLLATE "C");
-- A delivery's first attempt is held in its row (first_*; its time is created_at), the later ones in
-- _ninefold_delivery_attempts: a first try that succeeds writes one row. Rows written before first_* existed have
-- first_duration_ms NULL and every attempt in _ninefold_delivery_attempts.
CREATE TABLE IF NOT EXISTS _ninefold_deliveries (
  id bigserial PRIMARY KEY, endpoint_id text COLLATE "C" NOT NULL, event_id text COLLATE "C" NOT NULL,
  event_seq bigint NOT NULL DEFAULT 0, url text COLLATE "C", state text COLLATE "C" NOT NULL, attempts integer NOT NULL DEFAULT 0,
  next_at text COLLATE "C", lease_owner text COLLATE "C", lease_until text COLLATE "C", created_at text COLLATE "C" NOT NULL,
  first_status integer, first_duration_ms integer, first_error text COLLATE "C");
ALTER TABLE _ninefold_deliveries ADD COLUMN IF NOT EXISTS first_status integer;
ALTER TABLE _ninefold_deliveries ADD COLUMN IF NOT EXISTS first_duration_ms integer;
ALTER TABLE _ninefold_deliveries ADD COLUMN IF NOT EXISTS first_error text COLLATE "C";
-- Only pending deliveries are ever looked for by due time: delivered and failed ones stay out of the index.
DROP INDEX IF EXISTS _ninefold_deliveries_due;
CREATE INDEX IF NOT EXISTS _ninefold_deliveries_pending ON _ninefold_deliveries (next_at, id) WHERE state = 'pending';
CREATE INDEX IF NOT EXISTS _ninefold_deliveries_by_endpoint ON _ninefold_deliveries (endpoint_id, id);
CREATE TABLE IF NOT EXISTS _ninefold_delivery_attempts (
  pk bigserial PRIMARY KEY, delivery_id bigint NOT NULL, at text COLLATE "C" NOT NULL, status integer, duration_ms integer NOT NULL,
  error text COLLATE "C");
CREATE INDEX IF NOT EXISTS _ninefold_delivery_attempts_by_delivery ON _ninefold_delivery_attempts (delivery_id);

-- The event sequencer (event-log.ts): gives the events of committed transactions their seq, in one run at a time.
-- Each statement of a VOLATILE PL/pgSQL function reads a fresh snapshot, so the UPDATE, run once the lock is held,
-- sees every transaction committed before it, and the seqs it gives follow every seq given before.
CREATE OR REPLACE FUNCTION _ninefold_sequence_events() RETURNS bigint LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  n bigint;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM _ninefold_events WHERE seq IS NULL) THEN
    RETURN 0;
  END IF;
  PERFORM pg_advisory_xact_lock(hashtext('ninefold-events:' || current_schema()));
  WITH numbered AS (
    SELECT pk, coalesce((SELECT max(seq) FROM _ninefold_events), 0) + row_number() OVER (ORDER BY pk) AS seq
    FROM _ninefold_events WHERE seq IS NULL)
  UPDATE _ninefold_events AS e SET seq = numbered.seq FROM numbered WHERE e.pk = numbered.pk;
  GET DIAGNOSTICS n = ROW_COUNT;
  IF n > 0 THEN
    PERFORM pg_notify('ninefold', current_schema() || ' events');
  END IF;
  RETURN n;
END $$;
`;
