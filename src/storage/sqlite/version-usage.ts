import type { Database } from 'better-sqlite3';
import type { VersionUsageStore, VersionUse } from '../store.ts';

/** Use of API versions per caller per day, in the database file: every process on the file adds to the same rows. */
export const sqliteVersionUsage = (db: Database): VersionUsageStore => {
  db.exec(`CREATE TABLE IF NOT EXISTS _ninefold_version_usage (
    version TEXT NOT NULL, caller TEXT NOT NULL, day TEXT NOT NULL, count INTEGER NOT NULL, last_seen TEXT NOT NULL,
    PRIMARY KEY (version, caller, day)) STRICT`);
  const add = db.prepare(`INSERT INTO _ninefold_version_usage (version, caller, day, count, last_seen)
    VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (version, caller, day) DO UPDATE SET
      count = count + excluded.count, last_seen = MAX(last_seen, excluded.last_seen)`);
  const list = db.prepare(`SELECT version, caller, day, count, last_seen AS lastSeen FROM _ninefold_version_usage
    WHERE day >= ? ORDER BY day DESC, version, caller`);
  return {
    async add(rows) {
      for (const r of rows) add.run(r.version, r.caller, r.day, r.count, r.lastSeen);
    },
    async list(sinceDay) {
      return list.all(sinceDay) as VersionUse[];
    },
  };
};
