import type { Plan } from '../plan/types.ts';

/** A stored record: system fields, the revision, and the resource's field values as JS values. */
export type Row = Record<string, unknown> & {
  id: string;
  createdAt: string;
  updatedAt: string;
  revision: number;
};

/**
 * `eq`, `prefix` and `contains` compare strings exactly (case counts, as it does for unique fields); `ieq`,
 * `iprefix` and `icontains` fold A–Z to a–z first and compare every other character exactly. `contains` on an
 * array field is membership.
 */
export type FilterOp =
  | 'eq'
  | 'ne'
  | 'gt'
  | 'gte'
  | 'lt'
  | 'lte'
  | 'in'
  | 'prefix'
  | 'contains'
  | 'ieq'
  | 'iprefix'
  | 'icontains';

export interface Filter {
  readonly field: string;
  readonly op: FilterOp;
  /** A typed value; an array for `in`. */
  readonly value: unknown;
}

/**
 * A row condition beyond the caller's filters: an access rule compiled for the caller (auth part), applied inside
 * the query so that pages, cursors and counts only ever see the rows the caller may read.
 */
export type Condition =
  | { readonly kind: 'const'; readonly value: boolean }
  | { readonly kind: 'and' | 'or'; readonly items: readonly Condition[] }
  | { readonly kind: 'not'; readonly item: Condition }
  | {
      readonly kind: 'compare';
      readonly field: string;
      readonly op: 'eq' | 'ne' | 'lt' | 'lte' | 'gt' | 'gte';
      readonly value: unknown;
    }
  | { readonly kind: 'in'; readonly field: string; readonly values: readonly unknown[] };

/** One comparison of a computed column: a field of the counted records against a value or the listed record's field. */
export type ComputedTerm =
  | { readonly field: string; readonly op: 'eq' | 'ne' | 'lt' | 'lte' | 'gt' | 'gte'; readonly value: unknown }
  | { readonly field: string; readonly op: 'eq' | 'ne' | 'lt' | 'lte' | 'gt' | 'gte'; readonly record: string };

/**
 * A value computed for every row in the same SELECT (a correlated subquery): whether any (`exists`, a boolean) or
 * how many (`count`, an integer) records of `from` meet every term. A term whose value is null or undefined never
 * holds (an anonymous caller has favourited nothing). The row carries it under `name`.
 */
export interface ComputedColumn {
  readonly name: string;
  readonly kind: 'exists' | 'count';
  readonly from: string;
  readonly terms: readonly ComputedTerm[];
  /** The column the database keeps this count in (a tally): read it instead of counting. */
  readonly tally?: string;
  /** With `tally`: the count is the tally less the records that meet `terms` (one probe, not a walk over them all). */
  readonly less?: boolean;
}

/**
 * A row condition through other resources: some record of `from` meets every term (`EXISTS (SELECT 1 FROM …)`). A
 * term compares a field of that record with a value, with a field of the enclosing row (`outer`: the listed record
 * at the top, the enclosing related record below), or holds a nested related condition. A value that is null or
 * undefined never matches (an anonymous caller follows no one).
 */
export interface RelatedCondition {
  readonly from: string;
  readonly terms: readonly RelatedTerm[];
}

export type RelatedTerm =
  | { readonly field: string; readonly op: 'eq' | 'ne' | 'lt' | 'lte' | 'gt' | 'gte'; readonly value: unknown }
  | { readonly field: string; readonly op: 'eq' | 'ne' | 'lt' | 'lte' | 'gt' | 'gte'; readonly outer: string }
  | { readonly field: string; readonly op: 'contains'; readonly value: unknown }
  | { readonly related: RelatedCondition };

/** The distinct values of one field (each item of an array field) over the records a query's conditions keep. */
export interface DistinctQuery {
  readonly field: string;
  readonly where?: Condition;
  readonly related?: readonly RelatedCondition[];
  /** By value (ascending unless desc), or by how many records hold it (then by value). */
  readonly order: 'value' | 'count';
  readonly desc: boolean;
  readonly limit: number;
  readonly offset: number;
}

export interface DistinctRow {
  readonly value: unknown;
  /** How many records hold the value. */
  readonly count: number;
}

export interface ListQuery {
  readonly filters: readonly Filter[];
  readonly where?: Condition;
  /** Conditions through other resources (references, join records, named lists' CEL): all must hold. */
  readonly related?: readonly RelatedCondition[];
  readonly sort: ReadonlyArray<{ readonly field: string; readonly desc: boolean }>;
  /** Keyset: the sort values of the last row of the previous page, then its id. */
  readonly after?: readonly unknown[];
  /** How many rows to read (the runtime asks for one more than the page to know whether a next page exists). */
  readonly limit: number;
  /** Rows to skip before the page (offset and page paging); keyset paging leaves it out. */
  readonly offset?: number;
  readonly count: boolean;
  /** Values computed per row in the same query, added to each row by name. */
  readonly computed?: readonly ComputedColumn[];
}

export interface ListResult {
  readonly rows: Row[];
  readonly total?: number;
}

export interface UpdateExpectation {
  /** Only update when the stored revision is this one (If-Match). */
  readonly revision?: number;
  /** Only update when these fields hold these values (compare-and-set, e.g. the state of a transition). */
  readonly where?: Readonly<Record<string, unknown>>;
}

export interface MigrationReport {
  /** Resources whose table was created. */
  readonly created: string[];
  /** `Resource.field` of every column added. */
  readonly added: string[];
  /** `Resource.field` of every column dropped (empty ones, or with allowDataLoss). */
  readonly dropped: string[];
  /** Fields whose stored values were rewritten, one line each: a type change, or values allowDataLoss replaced. */
  readonly changed: string[];
}

export interface StoredResponse {
  readonly fingerprint: string;
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** What claiming an Idempotency-Key found. */
export type IdempotencyClaim =
  /** Nobody used the key: it is this transaction's until it ends (committed with its answer, or rolled back). */
  | { readonly state: 'new' }
  /** A request with the key completed: its answer. */
  | { readonly state: 'saved'; readonly response: StoredResponse }
  /** Another transaction holds the key right now. */
  | { readonly state: 'running' };

/**
 * Idempotency records live in the primary store, claimed and completed inside the transaction of the change they
 * answer, so that a key is used once whatever process or instance the requests reach.
 */
export interface IdempotencyStore {
  /** Claims (caller, key) inside the current write transaction; see IdempotencyClaim. */
  claim(caller: string, key: string, now: Date): Promise<IdempotencyClaim>;
  /** Saves the answer of the request holding the claim, in the same transaction. */
  complete(caller: string, key: string, response: StoredResponse): Promise<void>;
  /** Deletes at most `limit` records saved before `cutoff` (oldest first); how many went. */
  purgeBefore(cutoff: Date, limit: number): Promise<number>;
}

export interface HistoryEntry {
  readonly transition: string;
  readonly from: string;
  readonly to: string;
  readonly at: string;
  readonly input: unknown;
  /** Who took the transition: a principal's subject, '' for anonymous, 'system' for timers. */
  readonly actor: string;
}

export interface Timer {
  readonly id: number;
  readonly resource: string;
  readonly recordId: string;
  readonly transition: string;
  readonly fromState: string;
  readonly dueAt: string;
}

/** State-machine bookkeeping: the transition history and durable timers of timed transitions. */
export interface StateLog {
  append(resource: string, recordId: string, entry: HistoryEntry): Promise<void>;
  history(resource: string, recordId: string): Promise<HistoryEntry[]>;
  schedule(timer: Omit<Timer, 'id'>): Promise<void>;
  /** Drops every pending timer of a record (it left the state the timers were set for). */
  cancel(resource: string, recordId: string): Promise<void>;
  /** Leases due timers to `owner` so that no other process fires them while the lease holds. */
  claimDue(now: Date, owner: string, leaseMs: number, limit: number): Promise<Timer[]>;
  finish(timerId: number): Promise<void>;
  nextDue(): Promise<Date | undefined>;
}

/** An API key as stored: the secret itself is never stored, only its SHA-256. */
export interface ApiKeyRecord {
  /** Public identifier, also the first part of the key text (`nfk_<id>_<secret>`). */
  readonly id: string;
  /** Hex SHA-256 of the secret part. */
  readonly secretHash: string;
  readonly subject: string;
  readonly roles: readonly string[];
  readonly createdAt: string;
  /** ISO time after which the key is refused; undefined: never expires. */
  readonly expiresAt?: string;
  /** ISO time the key was revoked; undefined: live. */
  readonly revokedAt?: string;
  /** The API version served to requests with this key that name none (versioning part). */
  readonly apiVersion?: string;
}

/** Keys issued by the service (apiKey schemes). Lookups hit the database on every request: revocation is immediate. */
export interface ApiKeyStore {
  create(key: ApiKeyRecord): Promise<void>;
  find(id: string): Promise<ApiKeyRecord | undefined>;
  list(): Promise<ApiKeyRecord[]>;
  /** Marks the key revoked; false when no such live key. */
  revoke(id: string, at: Date): Promise<boolean>;
  /**
   * A number that changes whenever the keys may have changed (a write through this store, or any commit by
   * another process): what a caller caches about keys is good only while it stays the same.
   */
  generation(): number;
  /**
   * Set when other processes' key changes cannot be seen by a synchronous check (PostgreSQL): resolves once every
   * key change committed before the call is reflected in `generation` (one read of a key-change counter per turn
   * of the event loop, shared by that turn's requests), so that a key revoked before a request was sent is not
   * trusted from memory by that request. Notifications alone could arrive after the request.
   */
  settle?(): Promise<void>;
}

/** A fixed window of a counter: how many hits it holds and when it ends (ms since the epoch). */
export interface CounterWindow {
  readonly count: number;
  readonly resetAt: number;
}

/**
 * Counters in fixed windows, kept in the database so that every process and instance counts together (the failed-login
 * limiter: N instances must not give an attacker N times the attempts).
 */
export interface CounterStore {
  /** Adds one to `key` in its running window, or starts a new window of `windowMs` at `now`; the window after. */
  hit(key: string, now: Date, windowMs: number): Promise<CounterWindow>;
  /** The running window of `key` at `now`, or undefined when none runs. */
  peek(key: string, now: Date): Promise<CounterWindow | undefined>;
  /** Deletes at most `limit` windows that ended before `now`; how many went. */
  purgeBefore(now: Date, limit: number): Promise<number>;
  /** Ends the window of `key` now (an admin resets a caller's quota). */
  reset(key: string): Promise<void>;
}

/** Requests in one API version by one caller on one day (UTC), and when the last of them came. */
export interface VersionUse {
  readonly version: string;
  /** The principal's subject; '' for anonymous callers. */
  readonly caller: string;
  /** YYYY-MM-DD (UTC). */
  readonly day: string;
  readonly count: number;
  /** ISO time of the latest request counted. */
  readonly lastSeen: string;
}

/** Use of each API version per caller per day (versioning part): counted in memory, added here in batches. */
export interface VersionUsageStore {
  /** Adds each row's count to its (version, caller, day), keeping the later lastSeen; one upsert per row. */
  add(rows: readonly VersionUse[]): Promise<void>;
  /** Every row from `sinceDay` on, newest day first. */
  list(sinceDay: string): Promise<VersionUse[]>;
}

/** What a store tells its readers about: new events, changed API keys, changed webhook endpoints. */
/** Named sequences (integer ids, numbers per parent): 1, 2, 3…, each taken once. */
export interface SequenceStore {
  /**
   * The next number of `name`, taken inside the current write transaction: a concurrent writer waits for it to end,
   * and a rolled-back transaction gives its number back.
   */
  next(name: string): Promise<number>;
}

export type StoreChannel = 'events' | 'keys' | 'endpoints';

/**
 * Changes a process learns of without polling: from its own writes and, where the backend can tell, from every other
 * process on the database (PostgreSQL's LISTEN/NOTIFY). A listener may be told before the change is visible to it, or
 * once for several changes: it reads again and copes with finding nothing new. The store notifies its own writes
 * (an event appended, a key created or revoked, an endpoint written); nobody else has to remember to.
 */
export interface StoreSignals {
  /** Calls `listener` whenever the channel may have changed; returns the unsubscribe. */
  subscribe(channel: StoreChannel, listener: () => void): () => void;
}

/** One event in the outbox: written in the transaction of the change it tells of. */
export interface StoredEvent {
  /** Position in the outbox: strictly increasing in commit order within one database. */
  readonly seq: number;
  readonly id: string;
  readonly type: string;
  readonly time: string;
  /** The resource and record the event is about; undefined for declared events not tied to a record. */
  readonly resource?: string;
  readonly recordId?: string;
  /** The event's data (the record, the changed fields, the transition, a declared payload). */
  readonly data: Readonly<Record<string, unknown>>;
}

/** An event to append: its seq (and so its id) is given by the outbox. */
export interface NewEvent {
  readonly type: string;
  readonly time: string;
  readonly resource?: string;
  readonly recordId?: string;
  /** The event's data, or `dataJson`: the same already serialised (the writer of the change has it at hand). */
  readonly data?: Readonly<Record<string, unknown>>;
  readonly dataJson?: string;
}

/** The transactional outbox of events. Reads see committed events only. */
export interface EventLog {
  /** Appends inside the current write transaction (synchronously where the backend can). */
  append(event: NewEvent): void | Promise<void>;
  /** Committed events after `afterSeq`, oldest first, optionally of some types only. */
  after(afterSeq: number, limit: number, types?: readonly string[]): Promise<StoredEvent[]>;
  get(id: string): Promise<StoredEvent | undefined>;
  /** The seq of the newest committed event (0 when there is none). */
  lastSeq(): Promise<number>;
}

/** A registered webhook receiver, or the callbacks of one resource (kind `callback`: the URL is in each record). */
export interface WebhookEndpoint {
  readonly id: string;
  readonly kind: 'webhook' | 'callback';
  readonly url: string;
  /** Event types delivered; empty: all the owner may read. */
  readonly events: readonly string[];
  /** `whsec_…`; during a rotation the previous secret signs too, until `previousUntil`. */
  readonly secret: string;
  readonly previousSecret?: string;
  readonly previousUntil?: string;
  readonly description?: string;
  /** Who registered it: events reach it only when this caller may read their record. */
  readonly ownerSubject: string;
  readonly ownerRoles: readonly string[];
  /** The API version its payloads are rendered in (the versioning part's hook; undefined: the current one). */
  readonly apiVersion?: string;
  readonly createdAt: string;
  readonly disabledAt?: string;
  readonly disabledReason?: string;
  /** Outbox seq up to which every event was delivered, given up on or queued for retry. */
  readonly cursor: number;
  /** When the run of failed attempts now going on began (cleared by a success). */
  readonly failingSince?: string;
}

export interface DeliveryAttempt {
  readonly at: string;
  readonly status?: number;
  readonly durationMs: number;
  readonly error?: string;
}

/** One event on its way to one endpoint, with every attempt made. */
export interface Delivery {
  readonly id: number;
  readonly endpointId: string;
  readonly eventId: string;
  readonly eventSeq: number;
  /** The receiver of a callback (the record's URL when the event happened); endpoints use their own URL. */
  readonly url?: string;
  readonly state: 'pending' | 'delivered' | 'failed';
  readonly attempts: number;
  readonly nextAt?: string;
  readonly createdAt: string;
}

/** An attempt's outcome, saved with the attempt in one transaction. */
export interface AttemptRecord {
  /** The delivery row a retry belongs to; undefined for the first attempt, which creates the row. */
  readonly deliveryId?: number;
  readonly endpointId: string;
  readonly eventId: string;
  readonly eventSeq: number;
  readonly url?: string;
  readonly attempt: DeliveryAttempt;
  readonly next: { state: 'pending'; at: string } | { state: 'delivered' | 'failed' };
}

export interface WebhookStore {
  createEndpoint(e: WebhookEndpoint): Promise<void>;
  getEndpoint(id: string): Promise<WebhookEndpoint | undefined>;
  /** The webhook endpoints of one owner (callbacks are never listed). */
  listEndpoints(ownerSubject: string): Promise<WebhookEndpoint[]>;
  updateEndpoint(
    id: string,
    changes: Partial<Omit<WebhookEndpoint, 'id' | 'kind' | 'createdAt' | 'cursor'>>,
  ): Promise<void>;
  deleteEndpoint(id: string): Promise<void>;
  /**
   * Live endpoints this process consumes: the ones it already holds and the ones whose lease ran out,
   * leased to `owner` until `until` (so two processes never read one endpoint's cursor at once).
   */
  leaseEndpoints(owner: string, now: string, until: string): Promise<WebhookEndpoint[]>;
  releaseEndpoints(owner: string): Promise<void>;
  /** Sets an endpoint's cursor, whoever holds it (re-enabling: resume from now). */
  moveCursor(endpointId: string, seq: number): Promise<void>;
  /** Moves an endpoint's cursor forward (never back), while `owner` holds it. */
  advanceCursor(endpointId: string, owner: string, seq: number): Promise<void>;
  /**
   * Saves attempts and their deliveries' next states, all at once (a delivery appears at most once in a batch). Its
   * answer carries nothing: in a transaction on PostgreSQL it goes out with what follows, and a failure fails the
   * transaction.
   */
  recordAttempts(records: readonly AttemptRecord[]): Promise<void>;
  /** Due retries, oldest due first, leased to `owner` so that no other process sends them meanwhile. */
  claimDue(now: Date, owner: string, leaseMs: number, limit: number): Promise<Delivery[]>;
  listDeliveries(endpointId: string, limit: number): Promise<Array<Delivery & { log: DeliveryAttempt[] }>>;
  getDelivery(id: number): Promise<Delivery | undefined>;
  /** Sends a delivery again (a failed one, by hand): pending, due now. */
  retry(id: number, at: string): Promise<void>;
}

export interface DurabilityInfo {
  readonly backend: string;
  readonly journal: string;
  readonly synchronous: string;
}

/**
 * The storage contract. SQLite and PostgreSQL implement it and pass one contract suite
 * (test/storage-contract.test.ts); nothing backend-specific leaks past it.
 */
/**
 * A hold on a row until the transaction ends, so that references stay whole with several writers: `reference` is
 * taken on a record a write is about to refer to (no one may delete it meanwhile; others may refer to it too),
 * `delete` on a record about to be deleted (it waits for writes that refer to it, then keeps new ones off).
 */
export type RowLock = 'reference' | 'delete';

export interface Store {
  migrate(plan: Plan, options?: { allowDataLoss?: boolean }): Promise<MigrationReport>;
  /** `lock` holds the row until the transaction ends (a no-op where one writer serialises every transaction). */
  get(resource: string, id: string, lock?: RowLock): Promise<Row | undefined>;
  getMany(resource: string, ids: readonly string[]): Promise<Row[]>;
  insert(resource: string, row: Row): Promise<void>;
  /** Applies `changes` (and bumps the revision) when the expectation holds; undefined when no row matched. */
  update(
    resource: string,
    id: string,
    changes: Record<string, unknown>,
    expect?: UpdateExpectation,
  ): Promise<Row | undefined>;
  delete(resource: string, id: string, expect?: UpdateExpectation): Promise<boolean>;
  list(resource: string, query: ListQuery): Promise<ListResult>;
  /** The distinct values of a field over the records the query keeps (a list of tags). */
  distinct(resource: string, query: DistinctQuery): Promise<DistinctRow[]>;
  /** The keyset values a cursor records for `row` under `query`'s sort. */
  keysetOf(resource: string, query: ListQuery, row: Row): unknown[];
  /** Whether any record of `resource` has `field` equal to `value` (reference checks). */
  exists(resource: string, field: string, value: unknown): Promise<boolean>;
  /** Runs `fn` in one write transaction: all its writes commit together or not at all. */
  transaction<T>(fn: () => Promise<T>): Promise<T>;
  /**
   * True when the transactions of one turn of the event loop end together, in one callback (SQLite's group commit):
   * the answers of the requests they settle already leave together, so the server writes them at once rather than
   * holding them to the end of the next turn (runtime/answer-turn.ts).
   */
  readonly settlesTogether: boolean;
  /**
   * Runs record writes (insert, update, delete) that may fail, such as an insert that may meet a unique value, so
   * that a failure undoes only them and the running transaction goes on (a savepoint); outside a transaction it
   * runs `fn` as it is. Retrying a unique clash inside a request needs it: PostgreSQL refuses every statement of a
   * transaction after a failed one.
   */
  savepoint<T>(fn: () => Promise<T>): Promise<T>;
  readonly idempotency: IdempotencyStore;
  readonly stateLog: StateLog;
  readonly apiKeys: ApiKeyStore;
  readonly events: EventLog;
  readonly webhooks: WebhookStore;
  readonly counters: CounterStore;
  readonly versionUsage: VersionUsageStore;
  readonly sequences: SequenceStore;
  readonly signals: StoreSignals;
  /** Resolves when the database answers and can take writes as far as the store can tell; else StoreError. */
  ping(): Promise<void>;
  durability(): DurabilityInfo;
  /** Commits what is pending, then closes; never throws for a failure that loses nothing (see CloseReport). */
  close(): Promise<CloseReport>;
}

/**
 * `unique`: a unique field already holds the value (`field` names it). `busy`: another writer holds the database
 * past the wait; retry shortly. `unavailable`: storage cannot be read or written now (a full disk, an I/O error, a
 * read-only, corrupt or lost database file, a closed store); retry later. `migration-refused`: the spec change
 * would lose data (the message says what, for the operator).
 */
export type StoreErrorKind = 'unique' | 'busy' | 'unavailable' | 'migration-refused';

/** What closing a store found. */
export interface CloseReport {
  /**
   * True when everything acknowledged is in the database (its file and, for SQLite, its WAL); false when it may
   * not be (the file was deleted or replaced while the store ran).
   */
  readonly intact: boolean;
  /** One line for the operator about what closing could not do (a checkpoint left for the next start), if any. */
  readonly note?: string;
}

/**
 * The only error a store throws on purpose; the runtime maps each kind to a catalogued answer. Anything else a store
 * method throws is a bug. `message` is for logs and the operator, never for a client; `cause` keeps the driver's
 * error (its code, e.g. SQLITE_IOERR_WRITE) for the log.
 */
export class StoreError extends Error {
  /** Every field of a broken unique key (`field` is the first): a compound key names them all. */
  readonly fields: readonly string[];
  constructor(
    readonly kind: StoreErrorKind,
    message: string,
    readonly field?: string,
    options?: { readonly cause?: unknown; readonly fields?: readonly string[] },
  ) {
    super(message, options);
    this.name = 'StoreError';
    this.fields = options?.fields ?? (field === undefined ? [] : [field]);
  }
}
