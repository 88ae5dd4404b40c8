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
}

const toRecord = (r: KeyRow): ApiKeyRecord => ({
  id: r.id,
  secretHash: r.secret_hash,
  subject: r.subject,
  roles: JSON.parse(r.roles) as string[],
  createdAt: r.created_at,
  ...(r.expires_at ? { expiresAt: r.expires_at } : {}),
  ...(r.revoked_at ? { revokedAt: r.revoked_at } : {}),
});

/** API keys issued by the service: the SHA-256 of each secret, never the secret. */
export const sqliteApiKeys = (db: Database): ApiKeyStore => {
  db.exec(`CREATE TABLE IF NOT EXISTS _ninefold_api_keys (
    id TEXT PRIMARY KEY, secret_hash TEXT NOT NULL, subject TEXT NOT NULL, roles TEXT NOT NULL,
    created_at TEXT NOT NULL, expires_at TEXT, revoked_at TEXT) STRICT`);
  const insert = db.prepare(
    'INSERT INTO _ninefold_api_keys (id, secret_hash, subject, roles, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const find = db.prepare('SELECT * FROM _ninefold_api_keys WHERE id = ?');
  const list = db.prepare('SELECT * FROM _ninefold_api_keys ORDER BY created_at, id');
  const revoke = db.prepare('UPDATE _ninefold_api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL');
  return {
    async create(k) {
      insert.run(k.id, k.secretHash, k.subject, JSON.stringify(k.roles), k.createdAt, k.expiresAt ?? null);
    },
    async find(id) {
      const row = find.get(id) as KeyRow | undefined;
      return row ? toRecord(row) : undefined;
    },
    async list() {
      return (list.all() as KeyRow[]).map(toRecord);
    },
    async revoke(id, at) {
      return revoke.run(at.toISOString(), id).changes > 0;
    },
  };
};
