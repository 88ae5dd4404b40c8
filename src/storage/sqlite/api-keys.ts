import type { Database } from 'better-sqlite3';
import type { ApiKeyRecord, ApiKeyStore } from '../store.ts';

interface KeyRow {
  id: string;
  secret_hash: string;
  subject: string;
  roles: string;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  api_version: string | null;
}

const toRecord = (r: KeyRow): ApiKeyRecord => ({
  id: r.id,
  secretHash: r.secret_hash,
  subject: r.subject,
  roles: JSON.parse(r.roles) as string[],
  createdAt: r.created_at,
  ...(r.expires_at ? { expiresAt: r.expires_at } : {}),
  ...(r.revoked_at ? { revokedAt: r.revoked_at } : {}),
  ...(r.api_version ? { apiVersion: r.api_version } : {}),
});

const MAX_CACHED = 10_000;

/**
 * API keys issued by the service: the SHA-256 of each secret, never the secret. Lookups are cached for as long
 * as nothing else wrote to the database: `PRAGMA data_version` changes as soon as another connection (a
 * `ninefold keys revoke`, another server) commits, and this connection's own key writes clear the cache, so a
 * revocation takes effect from the next turn of the event loop, that is, on the next request.
 */
export const sqliteApiKeys = (db: Database): ApiKeyStore => {
  db.exec(`CREATE TABLE IF NOT EXISTS _ninefold_api_keys (
    id TEXT PRIMARY KEY, secret_hash TEXT NOT NULL, subject TEXT NOT NULL, roles TEXT NOT NULL,
    created_at TEXT NOT NULL, expires_at TEXT, revoked_at TEXT, api_version TEXT) STRICT`);
  // Databases made before keys carried a version get the column in place.
  const columns = db.prepare("SELECT name FROM pragma_table_info('_ninefold_api_keys')").pluck().all() as string[];
  if (!columns.includes('api_version')) db.exec('ALTER TABLE _ninefold_api_keys ADD COLUMN api_version TEXT');
  const insert = db.prepare(
    'INSERT INTO _ninefold_api_keys (id, secret_hash, subject, roles, created_at, expires_at, api_version) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const find = db.prepare('SELECT * FROM _ninefold_api_keys WHERE id = ?');
  const list = db.prepare('SELECT * FROM _ninefold_api_keys ORDER BY created_at, id');
  const revoke = db.prepare('UPDATE _ninefold_api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL');
  const dataVersion = db.prepare('PRAGMA data_version').pluck();
  const cache = new Map<string, ApiKeyRecord | null>();
  let seenVersion: unknown;
  let generation = 0;
  const changed = () => {
    generation++;
    cache.clear();
  };
  // Other connections' commits are looked for once per turn of the event loop: the requests of one turn were
  // all received before the check, so a revocation committed before that turn began is seen by every one of them.
  let checkedThisTurn = false;
  const nextTurn = () => {
    checkedThisTurn = false;
  };
  const checkVersion = () => {
    if (checkedThisTurn) return;
    checkedThisTurn = true;
    setImmediate(nextTurn);
    const version = dataVersion.get();
    if (version !== seenVersion) {
      seenVersion = version;
      changed();
    }
  };
  return {
    generation() {
      checkVersion();
      return generation;
    },
    async create(k) {
      changed();
      insert.run(
        k.id,
        k.secretHash,
        k.subject,
        JSON.stringify(k.roles),
        k.createdAt,
        k.expiresAt ?? null,
        k.apiVersion ?? null,
      );
    },
    async find(id) {
      checkVersion();
      let record = cache.get(id);
      if (record === undefined) {
        const row = find.get(id) as KeyRow | undefined;
        record = row ? toRecord(row) : null;
        if (cache.size < MAX_CACHED) cache.set(id, record);
      }
      return record ?? undefined;
    },
    async list() {
      return (list.all() as KeyRow[]).map(toRecord);
    },
    async revoke(id, at) {
      changed();
      return revoke.run(at.toISOString(), id).changes > 0;
    },
  };
};
