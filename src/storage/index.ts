/** The storage folder's one door. */

export {
  databaseTarget,
  isPostgresUrl,
  type OpenStoreOptions,
  openStore,
  shownTarget,
  storeExists,
} from './open-store.ts';
export { SqliteStore } from './sqlite/sqlite-store.ts';
export type {
  ApiKeyRecord,
  ApiKeyStore,
  AttemptRecord,
  CloseReport,
  ComputedColumn,
  Condition,
  CounterStore,
  CounterWindow,
  Delivery,
  DeliveryAttempt,
  EventLog,
  Filter,
  FilterOp,
  HistoryEntry,
  ListQuery,
  ListResult,
  MigrationReport,
  NewEvent,
  Row,
  SequenceStore,
  StateLog,
  Store,
  StoredEvent,
  StoredResponse,
  Timer,
  WebhookEndpoint,
  WebhookStore,
} from './store.ts';
export { StoreError } from './store.ts';
