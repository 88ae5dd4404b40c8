import { AsyncLocalStorage } from 'node:async_hooks';
import pg from 'pg';
import { StoreError } from '../store.ts';

export interface PostgresOptions {
  /** `postgres://user@host:port/database`; a `schema` query parameter names the schema (default `public`). */
  readonly url: string;
  /** Connections in the pool (default 10). */
  readonly poolSize?: number;
  /** A statement running longer is cancelled and answered busy (default 10 s). */
  readonly statementTimeoutMs?: number;
}

/** The connection string without the `schema` parameter, and the schema it named. */
export const parseUrl = (url: string): { readonly connectionString: string; readonly schema: string } => {
  const parsed = new URL(url);
  const schema = parsed.searchParams.get('schema') ?? 'public';
  parsed.searchParams.delete('schema');
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new StoreError('unavailable', `the schema "${schema}" is not a plain lower-case SQL name`);
  }
  return { connectionString: parsed.toString(), schema };
};

/** bigint (count(*), bigserial, integer fields) as a JS number; numeric stays the exact text. */
const INT8 = 20;
const types = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') =>
    oid === INT8 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as 'text'),
};

/** Runs of a statement on its own that a deadlock or serialization conflict rolled back. */
const RETRIES = 3;

interface Transaction {
  readonly client: pg.PoolClient;
  /**
   * Runs after COMMIT, before the caller is answered, on the same client (no second connection: callers holding
   * every client of the pool while waiting for another would wait for ever).
   */
  readonly afterCommit: Set<() => Promise<unknown>>;
  committed: boolean;
  /** The client went back to the pool: work the caller left running uses the pool, like any other. */
  released: boolean;
}

type Queryable = Pick<pg.PoolClient, 'query'>;

/**
 * The pool and the transaction of the running caller: a transaction checks a client out, runs BEGIN, and keeps the
 * client in its async context while the caller's work runs, so every statement the work makes (through any part
 * of the store) goes to that client; statements outside a transaction run on their own (autocommit).
 */
const ignore = () => undefined;

export class PgPool {
  readonly pool: pg.Pool;
  readonly schema: string;
  readonly connectionString: string;
  readonly #context = new AsyncLocalStorage<Transaction>();
  readonly #names = new Map<string, string>();

  constructor(options: PostgresOptions) {
    const { connectionString, schema } = parseUrl(options.url);
    this.schema = schema;
    this.connectionString = connectionString;
    this.pool = new pg.Pool({
      connectionString,
      max: options.poolSize ?? 10,
      options: `-c search_path=${schema} -c statement_timeout=${options.statementTimeoutMs ?? 10_000}`,
      connectionTimeoutMillis: 5000,
      types,
      // A statement is written without waiting for the answer to the one before it (see transaction()).
      pipeline: true,
    });
    // An idle client that loses its connection (a server restart) is dropped by the pool; it must not crash us.
    this.pool.on('error', () => undefined);
  }

  get inTransaction(): boolean {
    const tx = this.#context.getStore();
    return tx !== undefined && !tx.committed && !tx.released;
  }

  /** The caller runs on a client of its own (a transaction's, committed or not, until it goes back to the pool). */
  get holdsClient(): boolean {
    const tx = this.#context.getStore();
    return tx !== undefined && !tx.released;
  }

  /** Prepared once per connection: the same text keeps one name. */
  #named(text: string): string {
    let name = this.#names.get(text);
    if (!name) {
      name = `nf${this.#names.size}`;
      this.#names.set(text, name);
    }
    return name;
  }

  /** Rows of one statement, in the running transaction if there is one. */
  async rows<R>(text: string, params: readonly unknown[] = []): Promise<R[]> {
    return (await this.result<R>(text, params)).rows;
  }

  /** Statements with parameters are prepared (once per connection); the others run as they are. */
  async result<R>(text: string, params: readonly unknown[] = []): Promise<pg.QueryResult<R & pg.QueryResultRow>> {
    const tx = this.#context.getStore();
    const inTransaction = tx !== undefined && !tx.released;
    const target: Queryable = inTransaction ? tx.client : this.pool;
    const run = () =>
      params.length === 0
        ? target.query<R & pg.QueryResultRow>(text)
        : target.query<R & pg.QueryResultRow>({ name: this.#named(text), text, values: params as unknown[] });
    // A statement on its own that lost to a deadlock or a serialization conflict was rolled back whole: running it
    // again is safe. Inside a transaction the caller's whole work would have to run again, which only it may decide.
    for (let attempt = 1; ; attempt++) {
      try {
        return await run();
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        if (inTransaction || attempt >= RETRIES || (code !== '40001' && code !== '40P01')) throw error;
      }
    }
  }

  /** The running transaction's client, for statements of several parts (DDL); only inside a transaction. */
  client(): Queryable {
    const tx = this.#context.getStore();
    if (!tx || tx.committed) throw new Error('not inside a transaction');
    return tx.client;
  }

  /** Registers work to run once the running transaction commits (now, when there is none). */
  async afterCommit(work: () => Promise<unknown>): Promise<void> {
    const tx = this.#context.getStore();
    if (tx && !tx.committed) tx.afterCommit.add(work);
    else await work();
  }

  /**
   * One transaction (joined when already inside one); its after-commit work runs before the caller is answered. What
   * after-commit work throws is not the caller's failure (its writes are committed): the work is one a later call
   * repeats (the event sequencer).
   */
  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    if (this.inTransaction) return fn();
    const client = await this.pool.connect();
    // A checked-out client whose connection drops between statements emits 'error', which the pool only listens to
    // on idle clients: unheard, it would end the process. The next statement (or the ROLLBACK) fails with it anyway.
    client.on('error', ignore);
    const tx: Transaction = { client, afterCommit: new Set(), committed: false, released: false };
    let broken: unknown;
    try {
      // Pipelined: the first statement goes out right behind BEGIN, one round trip less per transaction. BEGIN fails
      // only with its connection, which fails the statements behind it too; its failure is still the one thrown.
      const begun = client.query('BEGIN').then(
        () => undefined,
        (e: unknown) => ({ failed: e }),
      );
      const result = await this.#context.run(tx, fn);
      const began = await begun;
      if (began) throw began.failed;
      await client.query('COMMIT');
      tx.committed = true;
      for (const work of tx.afterCommit) await this.#context.run(tx, work).catch(() => undefined);
      return result;
    } catch (error) {
      broken = await client.query('ROLLBACK').then(
        () => undefined,
        (e: unknown) => e,
      );
      throw error;
    } finally {
      tx.released = true;
      // A connection that could not roll back is closed, not reused.
      client.off('error', ignore);
      client.release(broken instanceof Error ? broken : undefined);
    }
  }

  /** Runs `fn` under a savepoint of the running transaction (see Store.savepoint); on its own outside one. */
  async savepoint<T>(fn: () => Promise<T>): Promise<T> {
    const tx = this.#context.getStore();
    if (!tx || tx.committed || tx.released) return fn();
    await tx.client.query('SAVEPOINT nf_try');
    let result: T;
    try {
      result = await fn();
    } catch (error) {
      await tx.client.query('ROLLBACK TO SAVEPOINT nf_try');
      await tx.client.query('RELEASE SAVEPOINT nf_try');
      throw error;
    }
    await tx.client.query('RELEASE SAVEPOINT nf_try');
    return result;
  }

  /**
   * Runs `fn` outside the caller's transaction: work it starts (a listener woken by a write) must not take the
   * writer's client, nor wait for a pool client while the writer holds one.
   */
  detached<T>(fn: () => T): T {
    return this.#context.exit(fn);
  }

  /** A client of its own (LISTEN, migrations under a session lock); the caller releases it. */
  connect(): Promise<pg.PoolClient> {
    return this.pool.connect();
  }

  async end(): Promise<void> {
    await this.pool.end();
  }
}
