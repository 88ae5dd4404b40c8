import type { Plan, ResourcePlan } from '../../plan/types.ts';
import { buildComputedSql, computedShapeKey } from '../sql/computed-sql.ts';
import { quote } from '../sql/dialect.ts';
import { buildDistinctSql, type DistinctSql, distinctShapeKey } from '../sql/distinct-sql.ts';
import { buildListSql, cursorValues, type ListSql, listShapeKey, SYSTEM_COLUMNS } from '../sql/list-sql.ts';
import { buildRelatedSql, relatedShapeKey } from '../sql/related-sql.ts';
import {
  type CloseReport,
  type DistinctQuery,
  type ListQuery,
  type Row,
  type RowLock,
  type Store,
  type StoreChannel,
  StoreError,
  type UpdateExpectation,
} from '../store.ts';
import { postgresApiKeys } from './api-keys.ts';
import { compileRowReader, toPg } from './columns.ts';
import { postgresCounters } from './counters.ts';
import { postgresEventLog } from './event-log.ts';
import { postgresIdempotency } from './idempotency.ts';
import { migratePostgres } from './migrate.ts';
import { isLost, storeErrorOf } from './pg-errors.ts';
import { PgPool, type PostgresOptions } from './pg-pool.ts';
import { createPgSignals } from './pg-signals.ts';
import { postgresDialect } from './postgres-dialect.ts';
import { postgresSequences } from './sequences.ts';
import { postgresStateLog } from './state-log.ts';
import { SYSTEM_TABLES } from './system-tables.ts';
import { postgresVersionUsage } from './version-usage.ts';
import { postgresWebhooks } from './webhooks.ts';

/** How often a migration that lost a deadlock or a serialization conflict is run again. */
const MIGRATION_TRIES = 5;

export type { PostgresOptions };

interface Table {
  readonly plan: ResourcePlan;
  readonly columns: string;
  readonly insert: string;
  readonly get: string;
  /** `get`, holding the row against deletion (FOR KEY SHARE) or for it (FOR UPDATE). */
  readonly getLocked: Readonly<Record<RowLock, string>>;
  readonly toRow: (raw: Record<string, unknown>) => Row;
  readonly toParams: (row: Row) => unknown[];
  /** List statements per shape, each with the reader of its rows (the table's, or one with the computed columns). */
  readonly lists: Map<string, ListSql & { readonly toRow: (raw: Record<string, unknown>) => Row }>;
  readonly distincts: Map<string, DistinctSql>;
  /** UPDATE statements by shape (the columns set, the columns compared, whether the revision is). */
  readonly updates: Map<string, string>;
}

const MAX_CACHED_SHAPES = 256;

/** Methods that answer synchronously, without the database: never wrapped. */
const SYNCHRONOUS = new Set(['generation', 'keysetOf', 'bump', 'sequence']);

/**
 * The scale-out store: any number of instances share one PostgreSQL schema. Every guarantee lives in the database:
 * unique indexes, idempotency claims in the caller's transaction, leases taken with SKIP LOCKED, an outbox numbered
 * in commit order (event-log.ts), migrations under an advisory lock, and LISTEN/NOTIFY to wake the other instances.
 */
export class PostgresStore implements Store {
  /** Each transaction ends when its own connection answers. */
  readonly settlesTogether = false;
  readonly #db: PgPool;
  readonly #tables = new Map<string, Table>();
  readonly #signals;
  readonly idempotency;
  readonly stateLog;
  readonly apiKeys;
  readonly events;
  readonly webhooks;
  readonly counters;
  readonly versionUsage;
  readonly sequences;
  readonly signals;
  #ready: Promise<void> | undefined;
  /** #ready has resolved: the store's calls no longer wait for it (an await per call is a promise and a turn). */
  #isReady = false;
  #closed = false;
  #lost = false;
  #synchronous = 'on';

  constructor(options: PostgresOptions) {
    const db = new PgPool(options);
    this.#db = db;
    const keys = postgresApiKeys(db);
    this.#signals = createPgSignals({ connectionString: db.connectionString, schema: db.schema }, (channel) => {
      if (channel === 'keys') keys.bump();
    });
    this.signals = this.#signals;
    // Listeners woken by a write (the webhook worker) run outside the writer's transaction.
    const detachedSignals = { notify: (channel: StoreChannel) => db.detached(() => this.#signals.notify(channel)) };
    const part = <T extends object>(built: T): T => this.#guarded(built);
    this.idempotency = part(postgresIdempotency(db));
    this.stateLog = part(postgresStateLog(db));
    this.counters = part(postgresCounters(db));
    this.versionUsage = part(postgresVersionUsage(db));
    this.sequences = part(postgresSequences(db));
    this.apiKeys = this.#telling('keys', part(keys), ['create', 'revoke']);
    this.events = part(postgresEventLog(db, () => detachedSignals.notify('events')));
    this.webhooks = this.#telling('endpoints', part(postgresWebhooks(db)), [
      'createEndpoint',
      'updateEndpoint',
      'deleteEndpoint',
      'moveCursor',
    ]);
    this.#guarded(this as PostgresStore, [
      'migrate',
      'get',
      'getMany',
      'insert',
      'update',
      'delete',
      'list',
      'distinct',
      'exists',
      'transaction',
      'savepoint',
      'ping',
    ]);
  }

  /** Makes the named writes tell this process at once and every other instance once they commit. */
  #telling<T extends object>(channel: StoreChannel, part: T, methods: ReadonlyArray<keyof T & string>): T {
    const target = part as Record<string, unknown>;
    for (const name of methods) {
      const method = target[name] as (...args: unknown[]) => Promise<unknown>;
      target[name] = async (...args: unknown[]) => {
        const result = await method.apply(part, args);
        await this.#db
          .rows(`SELECT pg_notify('ninefold', $1)`, [`${this.#db.schema} ${channel}`])
          .catch(() => undefined);
        this.#db.detached(() => this.#signals.notify(channel));
        return result;
      };
    }
    return part;
  }

  /**
   * Every asynchronous method: refused once the store is closed or its schema lost, run once the store's own tables
   * exist, and what it throws translated to a StoreError where it means one.
   */
  #guarded<T extends object>(part: T, names?: ReadonlyArray<string>): T {
    const target = part as Record<string, unknown>;
    const methods = names ?? Object.keys(part).filter((k) => typeof target[k] === 'function' && !SYNCHRONOUS.has(k));
    const translate = (error: unknown) => {
      if (isLost(error)) this.#lost = true;
      throw storeErrorOf(error, this.#errorContext);
    };
    for (const name of methods) {
      const method = target[name] as (...args: unknown[]) => Promise<unknown>;
      // Not an async function: on the path of every statement, an async wrapper's await is a promise and a turn more
      // (and, while a transaction runs, a call of the async context's hook).
      target[name] = (...args: unknown[]): Promise<unknown> => {
        if (this.#closed) return Promise.reject(new StoreError('unavailable', 'the store is closed'));
        if (this.#lost) return Promise.reject(this.#lostError());
        try {
          const pending =
            name !== 'migrate' && !this.#isReady && !this.#db.inTransaction
              ? this.#setUp().then(() => method.apply(part, args))
              : method.apply(part, args);
          return pending.then(undefined, translate);
        } catch (error) {
          return Promise.reject(error).then(undefined, translate);
        }
      };
    }
    return part;
  }

  #lostError() {
    return new StoreError('unavailable', `the schema "${this.#db.schema}" was deleted or replaced while the store ran`);
  }

  readonly #errorContext = {
    uniqueFields: (constraint: string): readonly string[] => {
      for (const { plan } of this.#tables.values()) {
        if (constraint === `${plan.table}_pkey`) return ['id'];
        for (const f of plan.fields) {
          if (`${plan.table}__${f.column}__unique`.startsWith(constraint) && constraint.length > plan.table.length)
            return [f.name];
        }
        const columnOf = (f: string) => plan.fieldsByName.get(f)?.column ?? f;
        // PostgreSQL cuts names at 63 bytes: the constraint may be a prefix of the index's name.
        const index = plan.indexes.find(
          (i) =>
            i.unique &&
            constraint.length > plan.table.length &&
            (i.name ?? `${plan.table}__${i.fields.map(columnOf).join('_')}`).startsWith(constraint),
        );
        if (index) return index.fields;
      }
      return [constraint];
    },
  };

  /** The schema and the store's own tables, made once per store (under the migration lock). */
  #setUp(): Promise<void> {
    this.#ready ??= this.#locked(async () => undefined).then(
      () => {
        this.#isReady = true;
      },
      (error: unknown) => {
        this.#ready = undefined;
        throw error;
      },
    );
    return this.#ready;
  }

  /** Runs `work` in one transaction holding the schema's migration lock, after making the store's own tables. */
  async #locked<T>(work: () => Promise<T>): Promise<T> {
    const attempt = () =>
      this.#db.transaction(async () => {
        await this.#db.rows('SELECT pg_advisory_xact_lock(hashtext($1))', [`ninefold-migrate:${this.#db.schema}`]);
        await this.#db.rows(`CREATE SCHEMA IF NOT EXISTS ${quote(this.#db.schema)}`);
        // Every statement is IF NOT EXISTS (or OR REPLACE): tables added by a later version join older schemas.
        await this.#db.client().query(SYSTEM_TABLES);
        return work();
      });
    // An instance starting beside running ones (a rolling restart) can lose a deadlock to their writes (replacing the
    // sequencer function, say). The migration's transaction was rolled back whole: running it again is safe.
    for (let tries = 1; ; tries++) {
      try {
        return await attempt();
      } catch (error) {
        const code = (error instanceof StoreError ? error.cause : error) as { code?: unknown } | undefined;
        if (tries >= MIGRATION_TRIES || (code?.code !== '40P01' && code?.code !== '40001')) throw error;
      }
    }
  }

  async migrate(plan: Plan, options: { allowDataLoss?: boolean } = {}) {
    const report = await this.#locked(() => migratePostgres(this.#db.client(), plan, options.allowDataLoss === true));
    this.#ready = Promise.resolve();
    this.#isReady = true;
    for (const resource of plan.resources) this.#tables.set(resource.name, this.#prepare(resource));
    const [setting] = await this.#db.rows<{ synchronous_commit: string }>('SHOW synchronous_commit');
    this.#synchronous = setting?.synchronous_commit ?? 'on';
    this.#signals.start();
    return report;
  }

  #prepare(plan: ResourcePlan): Table {
    const t = quote(plan.table);
    const fields = plan.fields;
    const names = ['id', 'created_at', 'updated_at', 'revision', ...fields.map((f) => f.column)];
    const writers = fields.map(toPg);
    const columns = names.map(quote).join(', ');
    return {
      plan,
      columns,
      insert: `INSERT INTO ${t} (${columns}) VALUES (${names.map((_, i) => `$${i + 1}`).join(', ')})`,
      get: `SELECT ${columns} FROM ${t} WHERE id = $1`,
      getLocked: {
        reference: `SELECT ${columns} FROM ${t} WHERE id = $1 FOR KEY SHARE`,
        delete: `SELECT ${columns} FROM ${t} WHERE id = $1 FOR UPDATE`,
      },
      toRow: compileRowReader(fields) as (raw: Record<string, unknown>) => Row,
      toParams: (row) => [
        row.id,
        row.createdAt,
        row.updatedAt,
        row.revision,
        ...fields.map((f, i) => (writers[i] as (v: unknown) => unknown)(row[f.name])),
      ],
      lists: new Map(),
      distincts: new Map(),
      updates: new Map(),
    };
  }

  #table(resource: string): Table {
    const table = this.#tables.get(resource);
    if (!table) throw new Error(`unknown resource ${resource}`);
    return table;
  }

  #column(table: Table, name: string) {
    return quote(SYSTEM_COLUMNS[name] ?? table.plan.fieldsByName.get(name)?.column ?? name);
  }

  #param(table: Table, name: string, value: unknown) {
    const field = table.plan.fieldsByName.get(name);
    return field ? toPg(field)(value) : value;
  }

  async get(resource: string, id: string, lock?: RowLock) {
    const table = this.#table(resource);
    const [raw] = lock
      ? await this.#db.rows<Record<string, unknown>>(table.getLocked[lock], [id])
      : await this.#db.read<Record<string, unknown>>(table.get, [id]);
    return raw ? table.toRow(raw) : undefined;
  }

  async getMany(resource: string, ids: readonly string[]) {
    if (ids.length === 0) return [];
    const table = this.#table(resource);
    const raws = await this.#db.read<Record<string, unknown>>(
      `SELECT ${table.columns} FROM ${quote(table.plan.table)} WHERE id = ANY($1::${table.plan.idStyle === 'integer' ? 'bigint' : 'text'}[]) ORDER BY id`,
      [ids],
    );
    return raws.map(table.toRow);
  }

  /** Not async: held in a transaction, the write answers at once (see PgPool.write). */
  insert(resource: string, row: Row) {
    const table = this.#table(resource);
    return this.#db.write(table.insert, table.toParams(row));
  }

  async update(resource: string, id: string, changes: Record<string, unknown>, expect: UpdateExpectation = {}) {
    const table = this.#table(resource);
    const names = Object.keys(changes);
    const where = expect.where ?? {};
    const whereNames = Object.keys(where);
    const checksRevision = expect.revision !== undefined;
    // The statement's text depends only on which columns change and which are compared: built once per shape.
    const shape = `${names.join(',')}|${whereNames.join(',')}|${checksRevision ? 'r' : ''}`;
    let text = table.updates.get(shape);
    if (!text) {
      let n = 0;
      const sets = [...names.map((name) => `${this.#column(table, name)} = $${++n}`), 'revision = revision + 1'];
      const conditions = [
        `id = $${++n}`,
        ...whereNames.map((name) => `${this.#column(table, name)} = $${++n}`),
        ...(checksRevision ? [`revision = $${++n}`] : []),
      ];
      text = `UPDATE ${quote(table.plan.table)} SET ${sets.join(', ')} WHERE ${conditions.join(' AND ')} RETURNING ${table.columns}`;
      if (table.updates.size < MAX_CACHED_SHAPES) table.updates.set(shape, text);
    }
    const params: unknown[] = names.map((name) => this.#param(table, name, changes[name]));
    params.push(id);
    for (const name of whereNames) params.push(this.#param(table, name, where[name]));
    if (checksRevision) params.push(expect.revision);
    const [raw] = await this.#db.rows<Record<string, unknown>>(text, params);
    return raw ? table.toRow(raw) : undefined;
  }

  async delete(resource: string, id: string, expect: UpdateExpectation = {}) {
    const table = this.#table(resource);
    const result =
      expect.revision === undefined
        ? await this.#db.result(`DELETE FROM ${quote(table.plan.table)} WHERE id = $1`, [id])
        : await this.#db.result(`DELETE FROM ${quote(table.plan.table)} WHERE id = $1 AND revision = $2`, [
            id,
            expect.revision,
          ]);
    return (result.rowCount ?? 0) > 0;
  }

  async list(resource: string, query: ListQuery) {
    const table = this.#table(resource);
    // The page size is part of the statement's text on PostgreSQL (Dialect.literalLimit), so of its shape.
    const key = `${listShapeKey(query)}|l${query.limit}${computedShapeKey(query.computed)}${relatedShapeKey(query.related)}`;
    let sql = table.lists.get(key);
    if (!sql) {
      const computed = query.computed?.length
        ? buildComputedSql(postgresDialect, table.plan, query.computed, (name) => this.#table(name).plan)
        : undefined;
      const extra = computed && {
        select: computed.select,
        params: (q: ListQuery) => computed.params(q.computed ?? []),
      };
      const related = query.related?.length
        ? buildRelatedSql(postgresDialect, table.plan, query.related, (name) => this.#table(name).plan)
        : undefined;
      const where = related && { clauses: related.clauses, params: (q: ListQuery) => related.params(q.related) };
      sql = {
        ...buildListSql(postgresDialect, table.plan, query, table.columns, extra, where),
        // The computed columns follow the table's: one reader makes each row with them.
        toRow: computed
          ? (compileRowReader(table.plan.fields, computed) as (raw: Record<string, unknown>) => Row)
          : table.toRow,
      };
      if (table.lists.size < MAX_CACHED_SHAPES) table.lists.set(key, sql);
    }
    const raws = await this.#db.read<Record<string, unknown>>(sql.select, sql.params(query));
    const rows = raws.map(sql.toRow);
    if (!sql.count) return { rows };
    const [counted] = await this.#db.read<{ n: number }>(sql.count, sql.countParams(query));
    return { rows, total: counted?.n ?? 0 };
  }

  async distinct(resource: string, query: DistinctQuery) {
    const table = this.#table(resource);
    const key = distinctShapeKey(query);
    let sql = table.distincts.get(key);
    if (!sql) {
      sql = buildDistinctSql(postgresDialect, table.plan, query, (name) => this.#table(name).plan);
      if (table.distincts.size < MAX_CACHED_SHAPES) table.distincts.set(key, sql);
    }
    const rows = await this.#db.read<{ nf_value: unknown; nf_count: number }>(sql.select, sql.params(query));
    return rows.map((r) => ({ value: r.nf_value, count: Number(r.nf_count) }));
  }

  keysetOf(resource: string, query: ListQuery, row: Row): unknown[] {
    return cursorValues(this.#table(resource).plan, query, row);
  }

  async exists(resource: string, field: string, value: unknown) {
    const table = this.#table(resource);
    const rows = await this.#db.read(
      `SELECT 1 FROM ${quote(table.plan.table)} WHERE ${this.#column(table, field)} = $1 LIMIT 1`,
      [this.#param(table, field, value)],
    );
    return rows.length > 0;
  }

  transaction<T>(fn: () => Promise<T>): Promise<T> {
    return this.#db.transaction(fn);
  }

  async savepoint<T>(fn: () => Promise<T>): Promise<T> {
    return this.#db.savepoint(fn);
  }

  /** The store's tables are there (not dropped under it) and the server takes writes (no standby). */
  async ping() {
    const [row] = await this.#db.rows<{ here: boolean; standby: boolean }>(
      `SELECT to_regclass('_ninefold_events') IS NOT NULL AS here, pg_is_in_recovery() AS standby`,
    );
    if (!row?.here) {
      this.#lost = true;
      throw this.#lostError();
    }
    if (row.standby) throw new StoreError('unavailable', 'the database is a read-only standby');
    // Until LISTEN holds again (after an outage), writes of other instances go unheard: a key they revoked would
    // still be taken here, a stream would not wake. Not ready until then.
    if (!this.#signals.listening) throw new StoreError('unavailable', 'not yet listening for the other instances');
  }

  durability() {
    return { backend: 'postgres', journal: 'wal', synchronous: this.#synchronous };
  }

  /** Stops listening and closes the pool; intact unless the schema was dropped under the store. */
  async close(): Promise<CloseReport> {
    if (this.#closed) return { intact: !this.#lost };
    let intact = !this.#lost;
    if (intact) {
      const [row] = await this.#db
        .rows<{ here: boolean }>(`SELECT to_regclass('_ninefold_events') IS NOT NULL AS here`)
        .catch(() => [{ here: true }]);
      intact = row?.here !== false || this.#ready === undefined;
    }
    this.#closed = true;
    await this.#signals.stop();
    await this.#db.end().catch(() => undefined);
    return intact ? { intact } : { intact, note: this.#lostError().message };
  }
}
