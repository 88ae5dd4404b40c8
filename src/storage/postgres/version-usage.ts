import type { VersionUsageStore, VersionUse } from '../store.ts';
import type { PgPool } from './pg-pool.ts';

/** Use of API versions per caller per day, shared by every instance: a batch is one statement. */
export const postgresVersionUsage = (db: PgPool): VersionUsageStore => ({
  async add(rows) {
    if (rows.length === 0) return;
    // One row per key in a batch (the counter sums in memory first): ON CONFLICT may touch each row once only.
    await db.result(
      `INSERT INTO _ninefold_version_usage AS u (version, caller, day, count, last_seen)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[])
       ON CONFLICT (version, caller, day) DO UPDATE SET
         count = u.count + excluded.count, last_seen = GREATEST(u.last_seen, excluded.last_seen)`,
      [
        rows.map((r) => r.version),
        rows.map((r) => r.caller),
        rows.map((r) => r.day),
        rows.map((r) => r.count),
        rows.map((r) => r.lastSeen),
      ],
    );
  },
  async list(sinceDay) {
    const rows = await db.rows<VersionUse & { count: string | number }>(
      `SELECT version, caller, day, count, last_seen AS "lastSeen" FROM _ninefold_version_usage
       WHERE day >= $1 ORDER BY day DESC, version, caller`,
      [sinceDay],
    );
    return rows.map((r) => ({ ...r, count: Number(r.count) }));
  },
});
