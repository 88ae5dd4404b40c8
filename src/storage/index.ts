/** The storage folder's one door. */

export { SqliteStore } from './sqlite/sqlite-store.ts';
export type {
  ApiKeyRecord,
  ApiKeyStore,
  Condition,
  Filter,
  FilterOp,
  HistoryEntry,
  ListQuery,
  ListResult,
  MigrationReport,
  Row,
  StateLog,
  Store,
  StoredResponse,
  Timer,
} from './store.ts';
export { StoreError } from './store.ts';
