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

/** Raises the key-change counter in the same statement as a key write (a data-modifying CTE runs either way). */
const BUMP = 'WITH bumped AS (UPDATE _ninefold_key_changes SET n = n + 1 WHERE id = 1) ';

/**
 * API keys: every lookup reads the database (no cache here). What callers remember about keys is good while the
 * generation stays the same; it changes on this store's own key writes, when another instance tells (LISTEN/NOTIFY,
 * `bump`), and when `settle` finds that the key-change counter moved. Every key write raises that counter in its own
 * statement, so it moves exactly when the write commits; `settle` reads it once per turn of the event loop for the
 * requests of that turn. A notification can arrive late (a busy listener backend), the counter cannot: a key revoked
 * through any instance is refused by every other on the next request sent after the revocation's answer.
 */
export const postgresApiKeys = (db: PgPool): ApiKeyStore & { bump(): void } => {
  let generation = 0;
  let seen: string | undefined;
  // The check of this turn, shared by the requests of this turn: all of them arrived before it was sent.
  let check: Promise<void> | undefined;
  const nextTurn = () => {
    check = undefined;
  };
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
    settle() {
      if (check) return check;
      setImmediate(nextTurn);
      check = db.rows<{ n: string }>('SELECT n FROM _ninefold_key_changes WHERE id = 1').then(([row]) => {
        const n = row?.n;
        // The first reading changes the generation too: what was remembered before it was never checked.
        if (n !== seen) {
          generation++;
          seen = n;
        }
      });
      return check;
    },
    async create(k) {
      generation++;
      await db.rows(
        `${BUMP}INSERT INTO _ninefold_api_keys (id, secret_hash, subject, roles, created_at, expires_at, api_version) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
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
        `${BUMP}UPDATE _ninefold_api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL`,
        [at.toISOString(), id],
      );
      await told();
      return (result.rowCount ?? 0) > 0;
    },
  };
};
