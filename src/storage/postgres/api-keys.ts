import type { ApiKeyRecord, ApiKeyStore } from '../store.ts';
import type { PgPool } from './pg-pool.ts';

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

/**
 * API keys: every lookup reads the database (no cache here), so a key revoked through any instance is refused by
 * every other on its next lookup. The generation changes on this store's own key writes and whenever another
 * instance tells (LISTEN/NOTIFY, `bump`), so what callers remember about keys is dropped then.
 */
export const postgresApiKeys = (db: PgPool): ApiKeyStore & { bump(): void } => {
  let generation = 0;
  const told = async () => {
    await db.rows(`SELECT pg_notify('ninefold', current_schema() || ' keys')`);
  };
  return {
    bump() {
      generation++;
    },
    generation() {
      return generation;
    },
    settle: () => new Promise<void>((done) => setImmediate(done)),
    async create(k) {
      generation++;
      await db.rows(
        'INSERT INTO _ninefold_api_keys (id, secret_hash, subject, roles, created_at, expires_at, api_version) VALUES ($1, $2, $3, $4, $5, $6, $7)',
        [
          k.id,
          k.secretHash,
          k.subject,
          JSON.stringify(k.roles),
          k.createdAt,
          k.expiresAt ?? null,
          k.apiVersion ?? null,
        ],
      );
      await told();
    },
    async find(id) {
      const [row] = await db.rows<KeyRow>('SELECT * FROM _ninefold_api_keys WHERE id = $1', [id]);
      return row ? toRecord(row) : undefined;
    },
    async list() {
      return (await db.rows<KeyRow>('SELECT * FROM _ninefold_api_keys ORDER BY created_at, id')).map(toRecord);
    },
    async revoke(id, at) {
      generation++;
      const result = await db.result(
        'UPDATE _ninefold_api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL',
        [at.toISOString(), id],
      );
      await told();
      return (result.rowCount ?? 0) > 0;
    },
  };
};
