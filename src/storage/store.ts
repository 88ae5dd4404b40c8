import type { Plan } from '../plan/types.ts';

/** A stored record: system fields, the revision, and the resource's field values as JS values. */
export type Row = Record<string, unknown> & {
  id: string;
  createdAt: string;
  updatedAt: string;
  revision: number;
};

export type FilterOp = 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte' | 'in' | 'prefix' | 'contains';

export interface Filter {
  readonly field: string;
  readonly op: FilterOp;
  /** A typed value; an array for `in`. */
  readonly value: unknown;
}

export interface ListQuery {
  readonly filters: readonly Filter[];
  readonly sort: ReadonlyArray<{ readonly field: string; readonly desc: boolean }>;
  /** Keyset: the sort values of the last row of the previous page, then its id. */
  readonly after?: readonly unknown[];
  /** How many rows to read (the runtime asks for one more than the page to know whether a next page exists). */
  readonly limit: number;
  readonly count: boolean;
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
  readonly created: string[];
  readonly added: string[];
  readonly dropped: string[];
}

export interface StoredResponse {
  readonly fingerprint: string;
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** Idempotency records live in the primary store, written in the same transaction as the change they answer. */
export interface IdempotencyStore {
  find(caller: string, key: string): Promise<StoredResponse | undefined>;
  save(caller: string, key: string, response: StoredResponse, now: Date): Promise<void>;
  purgeBefore(cutoff: Date): Promise<number>;
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

export interface DurabilityInfo {
  readonly backend: string;
  readonly journal: string;
  readonly synchronous: string;
}

/**
 * The storage contract. SQLite and PostgreSQL implement it and pass one contract suite
 * (test/storage-contract.test.ts); nothing backend-specific leaks past it.
 */
export interface Store {
  migrate(plan: Plan, options?: { allowDataLoss?: boolean }): Promise<MigrationReport>;
  get(resource: string, id: string): Promise<Row | undefined>;
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
  /** The keyset values a cursor records for `row` under `query`'s sort. */
  keysetOf(resource: string, query: ListQuery, row: Row): unknown[];
  /** Whether any record of `resource` has `field` equal to `value` (reference checks). */
  exists(resource: string, field: string, value: unknown): Promise<boolean>;
  /** Runs `fn` in one write transaction: all its writes commit together or not at all. */
  transaction<T>(fn: () => Promise<T>): Promise<T>;
  readonly idempotency: IdempotencyStore;
  readonly stateLog: StateLog;
  ping(): Promise<void>;
  durability(): DurabilityInfo;
  close(): Promise<void>;
}

export type StoreErrorKind = 'unique' | 'busy' | 'unavailable' | 'migration-refused';

/** The only error a store throws on purpose; the runtime maps each kind to a catalogued answer. */
export class StoreError extends Error {
  constructor(
    readonly kind: StoreErrorKind,
    message: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = 'StoreError';
  }
}
