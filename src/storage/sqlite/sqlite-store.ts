import type Database from 'better-sqlite3';
import type { Plan, ResourcePlan } from '../../plan/types.ts';
import { createLocalSignals, notifying } from '../local-signals.ts';
import { buildComputedSql, computedShapeKey } from '../sql/computed-sql.ts';
import { buildDistinctSql, type DistinctSql, distinctShapeKey } from '../sql/distinct-sql.ts';
import { buildListSql, cursorValues, type ListSql, listShapeKey } from '../sql/list-sql.ts';
import { buildRelatedSql, relatedShapeKey } from '../sql/related-sql.ts';
import type { CloseReport, DistinctQuery, ListQuery, Row, Store, UpdateExpectation } from '../store.ts';
import { sqliteApiKeys } from './api-keys.ts';
import { compileRowReader, quote, SYSTEM_COLUMNS, toSqlite } from './columns.ts';
import { sqliteCounters } from './counters.ts';
import { DatabaseFile } from './database-file.ts';
import { sqliteEventLog } from './event-log.ts';
import { GroupCommit, writesOwnTransaction } from './group-commit.ts';
import { sqliteIdempotency } from './idempotency.ts';
import { migrateSqlite } from './migrate.ts';
import { cannotOpen, openDatabase, type SqliteOptions } from './open-database.ts';
import { sqliteSequences } from './sequences.ts';
import { sqliteDialect } from './sqlite-dialect.ts';
import { methodsOf, storeErrorOf, translatingErrors } from './sqlite-errors.ts';
import { sqliteStateLog } from './state-log.ts';
import { sqliteVersionUsage } from './version-usage.ts';
import { sqliteWebhooks } from './webhooks.ts';

export type { SqliteOptions };

type Statement = Database.Statement;

interface Table {
  readonly plan: ResourcePlan;
  readonly insert: Statement;
  readonly get: Statement;
  readonly remove: Statement;
  /** Rows are read in raw (array) mode, columns in `columns` order: no per-row object of column names. */
  readonly toRow: (raw: unknown[]) => Row;
  readonly columns: string;
  readonly toParams: (row: Row) => unknown[];
  readonly updates: Map<string, Statement>;
  readonly lists: Map<string, { sql: ListSql; select: Statement; count?: Statement; toRow: (raw: unknown[]) => Row }>;
  readonly distincts: Map<string, { sql: DistinctSql; select: Statement }>;
}

const MAX_CACHED_SHAPES = 256;

const STORE_METHODS = [
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
] as const satisfies ReadonlyArray<keyof SqliteStore>;

/** The embedded store: one SQLite file in WAL mode, statements prepared once per shape. */
export class SqliteStore implements Store {
  /** Group commit: a turn's transactions end in one callback. */
  readonly settlesTogether = true;
  readonly #db: Database.Database;
  readonly #file: DatabaseFile;
  readonly #tables = new Map<string, Table>();
  readonly #synchronous: string;
  readonly #group: GroupCommit;
  readonly idempotency;
  readonly stateLog;
  readonly apiKeys;
  readonly events;
  readonly webhooks;
  readonly counters;
  readonly versionUsage;
  readonly sequences;
  readonly signals = createLocalSignals();

  constructor(options: SqliteOptions) {
    const db = openDatabase(options);
    this.#db = db;
    this.#synchronous = options.synchronous ?? 'NORMAL';
    try {
      this.#file = new DatabaseFile(options.path);
      const translate = (error: unknown) => storeErrorOf(error, this.#errorContext);
      const admit = () => this.#file.admit();
      const group = new GroupCommit(db, translate, this.#file);
      this.#group = group;
      /** Every method of a part: writes in a transaction of their own where needed, then errors translated. */
      const part = <T extends object>(built: T, writes: ReadonlyArray<keyof T & string>): T =>
        translatingErrors(writesOwnTransaction(group, built, writes), methodsOf(built), translate, admit);
      this.idempotency = part(sqliteIdempotency(db), ['claim', 'complete', 'purgeBefore']);
      this.stateLog = part(sqliteStateLog(db), ['append', 'schedule', 'cancel', 'claimDue', 'finish']);
      this.counters = part(sqliteCounters(db), ['hit', 'purgeBefore', 'reset']);
      this.versionUsage = part(sqliteVersionUsage(db), ['add']);
      this.sequences = part(sqliteSequences(db), ['next']);
      this.apiKeys = notifying(this.signals, 'keys', part(sqliteApiKeys(db), ['create', 'revoke']), [
        'create',
        'revoke',
      ]);
      this.events = notifying(this.signals, 'events', part(sqliteEventLog(db, options.path, group), []), ['append']);
      this.webhooks = notifying(
        this.signals,
        'endpoints',
        part(sqliteWebhooks(db), [
          'createEndpoint',
          'updateEndpoint',
          'deleteEndpoint',
          'leaseEndpoints',
          'releaseEndpoints',
          'moveCursor',
          'advanceCursor',
          'recordAttempts',
          'claimDue',
          'retry',
        ]),
        ['createEndpoint', 'updateEndpoint', 'deleteEndpoint', 'moveCursor'],
      );
      writesOwnTransaction(group, this as SqliteStore, ['insert', 'update', 'delete']);
      translatingErrors(this as SqliteStore, STORE_METHODS, translate, admit);
    } catch (error) {
      db.close();
      throw cannotOpen(options.path, error);
    }
  }

  /** What translating a SQLite error needs: whether the connection is open, and field names by table and column. */
  readonly #errorContext = {
    isOpen: () => this.#db.open,
    uniqueField: (table: string, column: string) => {
      for (const { plan } of this.#tables.values()) {
        if (plan.table === table) return plan.fields.find((f) => f.column === column)?.name ?? column;
      }
      return column;
    },
  };

  async migrate(plan: Plan, options: { allowDataLoss?: boolean } = {}) {
    const report = migrateSqlite(this.#db, plan, options.allowDataLoss === true);
    for (const resource of plan.resources) this.#tables.set(resource.name, this.#prepare(resource));
    return report;
  }

  #prepare(plan: ResourcePlan): Table {
    const t = quote(plan.table);
    const fields = plan.fields;
    const columns = ['id', 'created_at', 'updated_at', 'revision', ...fields.map((f) => f.column)];
    const writers = fields.map(toSqlite);
    // NB: plain INSERT with .run(): `INSERT … RETURNING` through .get() keeps the statement open and starves
    // the WAL checkpoint (the -wal file then grows without bound).
    return {
      plan,
      insert: this.#db.prepare(
        `INSERT INTO ${t} (${columns.map(quote).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
      ),
      get: this.#db.prepare(`SELECT ${columns.map(quote).join(', ')} FROM ${t} WHERE id = ?`).raw(true),
      columns: columns.map(quote).join(', '),
      remove: this.#db.prepare(`DELETE FROM ${t} WHERE id = ?`),
      toRow: compileRowReader(fields) as (raw: unknown[]) => Row,
      toParams: (row) => [
        row.id,
        row.createdAt,
        row.updatedAt,
        row.revision,
        ...fields.map((f, i) => (writers[i] as (v: unknown) => unknown)(row[f.name])),
      ],
      updates: new Map(),
      lists: new Map(),
      distincts: new Map(),
    };
  }

  #table(resource: string): Table {
    const table = this.#tables.get(resource);
    if (!table) throw new Error(`unknown resource ${resource}`);
    return table;
  }

  async get(resource: string, id: string) {
    const table = this.#table(resource);
    const raw = table.get.get(id) as unknown[] | undefined;
    return raw ? table.toRow(raw) : undefined;
  }

  async getMany(resource: string, ids: readonly string[]) {
    if (ids.length === 0) return [];
    const table = this.#table(resource);
    const raws = this.#db
      .prepare(`SELECT ${table.columns} FROM ${quote(table.plan.table)} WHERE id IN (${ids.map(() => '?').join(', ')})`)
      .raw(true)
      .all(...ids) as unknown[][];
    return raws.map(table.toRow);
  }

  async insert(resource: string, row: Row) {
    const table = this.#table(resource);
    table.insert.run(table.toParams(row));
  }

  async update(resource: string, id: string, changes: Record<string, unknown>, expect: UpdateExpectation = {}) {
    const table = this.#table(resource);
    const names = Object.keys(changes);
    const whereNames = Object.keys(expect.where ?? {});
    const key = `${names.join(',')}|${whereNames.join(',')}|${expect.revision === undefined ? '' : 'r'}`;
    let statement = table.updates.get(key);
    const column = (n: string) => quote(SYSTEM_COLUMNS[n] ?? table.plan.fieldsByName.get(n)?.column ?? n);
    if (!statement) {
      const sets = [...names.map((n) => `${column(n)} = ?`), 'revision = revision + 1'];
      const conditions = [
        'id = ?',
        ...whereNames.map((n) => `${column(n)} = ?`),
        ...(expect.revision === undefined ? [] : ['revision = ?']),
      ];
      statement = this.#db.prepare(
        `UPDATE ${quote(table.plan.table)} SET ${sets.join(', ')} WHERE ${conditions.join(' AND ')}`,
      );
      if (table.updates.size < MAX_CACHED_SHAPES) table.updates.set(key, statement);
    }
    const convert = (n: string, v: unknown) => {
      const field = table.plan.fieldsByName.get(n);
      return field ? toSqlite(field)(v) : v;
    };
    const params = [
      ...names.map((n) => convert(n, changes[n])),
      id,
      ...whereNames.map((n) => convert(n, expect.where?.[n])),
      ...(expect.revision === undefined ? [] : [expect.revision]),
    ];
    if (statement.run(params).changes === 0) return undefined;
    return this.get(resource, id);
  }

  async delete(resource: string, id: string, expect: UpdateExpectation = {}) {
    const table = this.#table(resource);
    if (expect.revision !== undefined) {
      return (
        this.#db
          .prepare(`DELETE FROM ${quote(table.plan.table)} WHERE id = ? AND revision = ?`)
          .run(id, expect.revision).changes > 0
      );
    }
    return table.remove.run(id).changes > 0;
  }

  async list(resource: string, query: ListQuery) {
    const table = this.#table(resource);
    const key = listShapeKey(query) + computedShapeKey(query.computed) + relatedShapeKey(query.related);
    let entry = table.lists.get(key);
    if (!entry) {
      const computed = query.computed?.length
        ? buildComputedSql(sqliteDialect, table.plan, query.computed, (name) => this.#table(name).plan)
        : undefined;
      const extra = computed && {
        select: computed.select,
        params: (q: ListQuery) => computed.params(q.computed ?? []),
      };
      const related = query.related?.length
        ? buildRelatedSql(sqliteDialect, table.plan, query.related, (name) => this.#table(name).plan)
        : undefined;
      const where = related && { clauses: related.clauses, params: (q: ListQuery) => related.params(q.related) };
      const sql = buildListSql(sqliteDialect, table.plan, query, table.columns, extra, where);
      entry = {
        sql,
        select: this.#db.prepare(sql.select).raw(true),
        ...(sql.count ? { count: this.#db.prepare(sql.count) } : {}),
        // The computed columns follow the table's: one reader makes each row with them.
        toRow: computed ? (compileRowReader(table.plan.fields, computed) as (raw: unknown[]) => Row) : table.toRow,
      };
      if (table.lists.size < MAX_CACHED_SHAPES) table.lists.set(key, entry);
    }
    const rows = (entry.select.all(entry.sql.params(query)) as unknown[][]).map(entry.toRow);
    if (!entry.count) return { rows };
    const total = (entry.count.get(entry.sql.countParams(query)) as { n: number }).n;
    return { rows, total };
  }

  async distinct(resource: string, query: DistinctQuery) {
    const table = this.#table(resource);
    const key = distinctShapeKey(query);
    let entry = table.distincts.get(key);
    if (!entry) {
      const sql = buildDistinctSql(sqliteDialect, table.plan, query, (name) => this.#table(name).plan);
      entry = { sql, select: this.#db.prepare(sql.select) };
      if (table.distincts.size < MAX_CACHED_SHAPES) table.distincts.set(key, entry);
    }
    const rows = entry.select.all(entry.sql.params(query)) as Array<{ nf_value: unknown; nf_count: number }>;
    return rows.map((r) => ({ value: r.nf_value, count: Number(r.nf_count) }));
  }

  keysetOf(resource: string, query: ListQuery, row: Row): unknown[] {
    return cursorValues(this.#table(resource).plan, query, row);
  }

  async exists(resource: string, field: string, value: unknown) {
    const table = this.#table(resource);
    const column = SYSTEM_COLUMNS[field] ?? table.plan.fieldsByName.get(field)?.column ?? field;
    return (
      this.#db.prepare(`SELECT 1 FROM ${quote(table.plan.table)} WHERE ${quote(column)} = ? LIMIT 1`).get(value) !==
      undefined
    );
  }

  /** One write transaction per call; concurrent calls are committed together (see group-commit.ts). */
  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    return this.#group.run(fn);
  }

  async savepoint<T>(fn: () => Promise<T>): Promise<T> {
    return this.#group.savepoint(fn);
  }

  /** The file is still the one opened (a stat), answers a query, and takes writes (see GroupCommit.probe). */
  async ping() {
    this.#file.verify();
    this.#db.prepare('SELECT 1').get();
    this.#group.probe();
  }

  durability() {
    return { backend: 'sqlite', journal: 'wal', synchronous: this.#synchronous.toLowerCase() };
  }

  /**
   * Commits the open batch (its callers are answered by its outcome), then checkpoints and closes. A checkpoint that
   * cannot run (a full disk) loses nothing: every commit is in the WAL, which SQLite applies at the next open. The
   * checkpoint runs even when the file was lost, so that SQLite truncates the WAL left at the path and a new file
   * there never replays it.
   */
  async close(): Promise<CloseReport> {
    if (!this.#db.open) return { intact: !this.#file.lost };
    this.#group.flush();
    const notes: string[] = [];
    const attempt = (what: string, step: () => void) => {
      try {
        step();
      } catch (error) {
        const mapped = storeErrorOf(error, this.#errorContext);
        notes.push(`${what}: ${mapped instanceof Error ? mapped.message : String(mapped)}`);
      }
    };
    attempt('closing the event reader', () => this.events.close());
    attempt('the WAL was not checkpointed (it is applied at the next start)', () =>
      this.#db.pragma('wal_checkpoint(TRUNCATE)'),
    );
    attempt('closing the database', () => this.#db.close());
    let intact = true;
    try {
      this.#file.verify();
    } catch (error) {
      intact = false;
      notes.unshift((error as Error).message);
    }
    return { intact, ...(notes.length > 0 ? { note: notes.join('; ') } : {}) };
  }
}
