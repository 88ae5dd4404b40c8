import { AsyncLocalStorage } from 'node:async_hooks';
import pg from 'pg';
import { StoreError } from '../store.ts';

/** The driver, for a caller that loads this module lazily and needs a one-off client. */
export { pg };

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
const int8 = (v: string) => Number(v);
// Asked once per column of every result (node-postgres reads each answer's row description anew): no closure per call.
const types = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') =>
    oid === INT8 ? int8 : pg.types.getTypeParser(oid, format as 'text'),
};

/** A connection that cannot be made in this time fails (the server is unreachable): answered unavailable. */
const CONNECT_TIMEOUT_MS = 5000;

class ConnectingClient extends pg.Client {
  constructor(config: pg.ClientConfig = {}) {
    super({ ...config, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  }
}

interface Held {
  readonly text: string;
  readonly params: readonly unknown[];
}

/**
 * The parameters of a statement prepared although it has none: `read` hands it on for a SELECT without parameters.
 * Any other statement without parameters goes by the simple protocol, which also runs a text of several statements.
 */
const PREPARED_WITHOUT_PARAMETERS: readonly unknown[] = Object.freeze([]);
/** Statement texts prepared by name at most (see #named): each connection keeps a plan for every one. */
const MAX_PREPARED = 2000;
/** At most this many held writes are merged into one statement, and this many merged texts kept (see #merged). */
const MAX_MERGED = 4;
const MAX_MERGES = 256;
const PLACEHOLDER = /\$(\d+)/g;
const INSERT_INTO = 'INSERT INTO ';
/** A plain INSERT (no literal, no other `$`) whose placeholders are `$1…$count`: renumbered safely in a merge. */
const mergeable = (text: string, count: number): boolean => {
  if (!text.startsWith(INSERT_INTO) || /['$;]/.test(text.replace(PLACEHOLDER, ''))) return false;
  let max = 0;
  for (const [, n] of text.matchAll(PLACEHOLDER)) max = Math.max(max, Number(n));
  return max === count;
};

/** The text of held writes as one statement (see PgPool.#merged); null when they cannot be. */
const mergedText = (held: readonly Held[]): string | null => {
  let offset = 0;
  const parts: string[] = [];
  const tables = new Set<string>();
  for (const h of held) {
    if (!mergeable(h.text, h.params.length)) return null;
    // The parts of one statement write in no set order: rows of one table (events, numbered in the order they were
    // written) keep theirs only as separate statements.
    const table = h.text.slice(INSERT_INTO.length, h.text.indexOf(' ', INSERT_INTO.length));
    if (tables.has(table)) return null;
    tables.add(table);
    const base = offset;
    parts.push(h.text.replace(PLACEHOLDER, (_, n: string) => `$${Number(n) + base}`));
    offset += h.params.length;
  }
  const last = parts.pop() as string;
  return `WITH ${parts.map((p, i) => `nf_w${i} AS (${p})`).join(', ')} ${last}`;
};

/** Held writes whose texts so far are these: the next one's, and the merged text of these alone once made. */
interface MergeNode {
  text?: string | null;
  readonly next: Map<string, MergeNode>;
}

/** Runs of a statement on its own that a deadlock or serialization conflict rolled back. */
const RETRIES = 3;

/**
 * Connections that statements on their own share (see PgPool.#lane). Each of a pool's connections carries one
 * statement at a time, and its backend wakes up, reads, answers and sleeps for each: on a host where Node and
 * PostgreSQL share the cores, that costs PostgreSQL more than the statement. On a lane the statements of one turn of
 * the loop leave in one write, back to back (pipelined), and the backend answers them in one wake-up.
 */
const LANES = 2;
/** Statements in flight on one lane before the next goes to a pool connection of its own. */
const LANE_DEPTH = 32;
/** A lane that has answered nothing for this long (a slow statement at its head) takes no more until it does. */
const LANE_STALL_MS = 20;

interface Lane {
  readonly client: pg.Client;
  readonly connection: { readonly stream: { cork(): void; uncork(): void } };
  inFlight: number;
  /** When it last answered, or was given a statement while idle (performance.now()). */
  progress: number;
  /** Its socket is corked until the loop's next turn: the statements of one turn leave in one write. */
  corked: boolean;
}

interface Transaction {
  /** Checked out when a statement first needs an answer, or at COMMIT (none for a transaction that wrote nothing). */
  client?: pg.PoolClient;
  /** The client, once checked out (BEGIN goes out with the first statement sent on it). */
  opening?: Promise<pg.PoolClient>;
  /** BEGIN's outcome, once sent: the error it failed with, if it did. */
  began?: Promise<{ failed: unknown } | undefined>;
  /** Writes whose answer nobody waits for, not sent yet (see PgPool.write): they go out with the next statement. */
  readonly held: Held[];
  /** Savepoints under way: writes are sent and waited for, not held. */
  eager: number;
  /** Statements waiting for the client to be checked out (see #inTransaction). */
  waiting: number;
  /** Writes sent on the client whose answers COMMIT waits for. */
  readonly sent: Promise<unknown>[];
  /** What the first of them failed with: the error the transaction fails with. */
  failure?: { readonly error: unknown };
  /** Called once COMMIT has succeeded, before the caller is answered; each once however often it was registered. */
  readonly onCommit: Set<() => void>;
  committed: boolean;
  /** The transaction ended (committed or rolled back): work the caller left running uses the pool, like any other. */
  released: boolean;
}

type Queryable = Pick<pg.PoolClient, 'query'>;

const tellCommitted = (told: ReadonlySet<() => void>) => {
  for (const fn of told) {
    try {
      fn();
    } catch {
      // The writes are committed: what a listener throws is not the caller's failure.
    }
  }
};

const rowsOf = <R>(result: { rows: R[] }): R[] => result.rows;

/**
 * Runs `send` with the client's socket corked: node-postgres writes every statement to the socket as it is made, one
 * system call each, and a system call costs more than the statement's own work here. Corked, BEGIN, the held writes,
 * the statement that needs an answer (or COMMIT) leave in one write.
 */
const corked = <T>(client: pg.PoolClient, send: () => T): T => {
  const stream = (client as unknown as { connection?: { stream?: { cork?(): void; uncork?(): void } } }).connection
    ?.stream;
  stream?.cork?.();
  try {
    return send();
  } finally {
    stream?.uncork?.();
  }
};

/**
 * The pool and the transaction of the running caller: a transaction checks a client out, runs BEGIN, and keeps the
 * client in its async context while the caller's work runs, so every statement the work makes (through any part
 * of the store) goes to that client; statements outside a transaction run on their own (autocommit).
 */
const ignore = () => undefined;
/** What a held write answers at once (not async: a promise and a turn less on the path of every write). */
const HELD: Promise<void> = Promise.resolve();

export class PgPool {
  readonly pool: pg.Pool;
  readonly schema: string;
  readonly connectionString: string;
  readonly #context = new AsyncLocalStorage<Transaction>();
  readonly #names = new Map<string, string>();
  /** The text of held INSERTs merged into one statement, by theirs, one level per held write (see #merged). */
  readonly #merges = new Map<string, MergeNode>();
  #mergeCount = 0;
  /** Transactions under way: the async context is tracked only while there are some (see transaction()). */
  #active = 0;
  readonly #clientConfig: pg.ClientConfig;
  readonly #lanes: Lane[] = [];
  #ended = false;

  constructor(options: PostgresOptions) {
    const { connectionString, schema } = parseUrl(options.url);
    this.schema = schema;
    this.connectionString = connectionString;
    this.#clientConfig = {
      connectionString,
      options: `-c search_path=${schema} -c statement_timeout=${options.statementTimeoutMs ?? 10_000}`,
      types,
      pipeline: true,
    };
    this.pool = new pg.Pool({
      connectionString,
      max: options.poolSize ?? 10,
      options: this.#clientConfig.options,
      // The time-out of a new connection is the client's own (ConnectingClient): the pool's option would also arm a
      // timer for every checkout, that is for every statement outside a transaction. Waiting for a pool client is
      // bounded by the statement time-out of the clients it waits for, and by the request's time budget.
      Client: ConnectingClient,
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

  /**
   * Prepared once per connection: the same text keeps one name. Past MAX_PREPARED texts (clients combining filters,
   * sorts and page sizes), a new one is sent unnamed, parsed and planned at each run, so that neither this map nor
   * each connection's prepared statements grow without end.
   */
  #named(text: string): string | undefined {
    let name = this.#names.get(text);
    if (!name) {
      if (this.#names.size >= MAX_PREPARED) return undefined;
      name = `nf${this.#names.size}`;
      this.#names.set(text, name);
    }
    return name;
  }

  #send<R>(target: Queryable, text: string, params: readonly unknown[]) {
    const name = params.length === 0 && params !== PREPARED_WITHOUT_PARAMETERS ? undefined : this.#named(text);
    return name === undefined
      ? target.query<R & pg.QueryResultRow>(text, params.length === 0 ? undefined : (params as unknown[]))
      : target.query<R & pg.QueryResultRow>({ name, text, values: params as unknown[] });
  }

  /** Rows of one statement, in the running transaction if there is one. */
  rows<R>(text: string, params: readonly unknown[] = []): Promise<R[]> {
    return this.result<R>(text, params).then(rowsOf);
  }

  /**
   * Rows of a read that takes no lock and waits for none (a plain SELECT). On its own it goes to a lane (see #lane);
   * in a transaction, to its client.
   */
  read<R>(text: string, given: readonly unknown[]): Promise<R[]> {
    // A read is one SELECT: prepared even without parameters (a list page whose LIMIT is in its text).
    const params = given.length === 0 ? PREPARED_WITHOUT_PARAMETERS : given;
    const tx = this.#context.getStore();
    if (tx !== undefined && !tx.released && !tx.committed) return this.#inTransaction<R>(tx, text, params).then(rowsOf);
    return this.#shared<R>(text, params).then(rowsOf);
  }

  /**
   * A statement on its own that waits for no lock a caller holds long: on a lane when one has room, else on a pool
   * connection of its own.
   */
  #shared<R>(text: string, params: readonly unknown[]): Promise<pg.QueryResult<R & pg.QueryResultRow>> {
    const lane = this.#lane();
    if (!lane) return this.#alone<R>(text, params, 1);
    if (lane.inFlight++ === 0) lane.progress = performance.now();
    if (!lane.corked) {
      // Read each time: with TLS the client replaces its socket once connected.
      const stream = lane.connection.stream;
      lane.corked = true;
      stream.cork();
      setImmediate(() => {
        lane.corked = false;
        stream.uncork();
      });
    }
    // Sent before the connection is made, a statement waits in the client's queue.
    return this.#send<R>(lane.client, text, params).then(
      (result) => {
        lane.inFlight--;
        lane.progress = performance.now();
        return result;
      },
      (error: unknown) => {
        lane.inFlight--;
        lane.progress = performance.now();
        throw error;
      },
    );
  }

  /**
   * A lane with room: the idle one, a new one while there are fewer than LANES, else the least busy unless it holds
   * LANE_DEPTH statements or has answered none for LANE_STALL_MS (a slow statement at its head holds back the ones
   * behind it: the next go elsewhere). Undefined when none has room.
   */
  #lane(): Lane | undefined {
    let best: Lane | undefined;
    for (const lane of this.#lanes) if (!best || lane.inFlight < best.inFlight) best = lane;
    if (best && best.inFlight === 0) return best;
    if (this.#lanes.length < LANES && !this.#ended) return this.#newLane();
    if (!best || best.inFlight >= LANE_DEPTH || performance.now() - best.progress > LANE_STALL_MS) return undefined;
    return best;
  }

  #newLane(): Lane {
    const client = new ConnectingClient(this.#clientConfig);
    const { connection } = client as unknown as { connection: Lane['connection'] };
    const lane: Lane = { client, connection, inFlight: 0, progress: 0, corked: false };
    const drop = () => {
      const at = this.#lanes.indexOf(lane);
      if (at < 0) return;
      this.#lanes.splice(at, 1);
      client.end().catch(ignore);
    };
    client.connect().catch(drop);
    client.on('error', drop);
    client.on('end', drop);
    this.#lanes.push(lane);
    return lane;
  }

  /** Statements with parameters are prepared (once per connection); the others run as they are. */
  result<R>(text: string, params: readonly unknown[] = []): Promise<pg.QueryResult<R & pg.QueryResultRow>> {
    const tx = this.#context.getStore();
    if (tx !== undefined && !tx.released && !tx.committed) return this.#inTransaction<R>(tx, text, params);
    return this.#alone<R>(text, params, 1);
  }

  /**
   * A statement on its own. One that lost to a deadlock or a serialization conflict was rolled back whole: running it
   * again is safe. Inside a transaction the caller's whole work would have to run again, which only it may decide.
   */
  #alone<R>(text: string, params: readonly unknown[], attempt: number): Promise<pg.QueryResult<R & pg.QueryResultRow>> {
    return this.#send<R>(this.pool, text, params).catch((error: unknown) => {
      const code = (error as { code?: unknown }).code;
      if (attempt >= RETRIES || (code !== '40001' && code !== '40P01')) throw error;
      return this.#alone<R>(text, params, attempt + 1);
    });
  }

  #inTransaction<R>(tx: Transaction, text: string, params: readonly unknown[]) {
    // Once the client is checked out and no statement made before waits for it, a statement is sent at once (no
    // turn of the loop); the ones that wait go out in the order they were made.
    let sent: Promise<pg.QueryResult<R & pg.QueryResultRow>>;
    if (tx.client && tx.waiting === 0) {
      try {
        sent = this.#sendOn<R>(tx, tx.client, text, params);
      } catch (error) {
        sent = Promise.reject(error);
      }
    } else {
      tx.waiting++;
      sent = this.#open(tx).then(
        (client) => {
          tx.waiting--;
          return this.#sendOn<R>(tx, client, text, params);
        },
        (error: unknown) => {
          tx.waiting--;
          throw error;
        },
      );
    }
    return sent.catch((error: unknown) => this.#failure(tx, error));
  }

  #sendOn<R>(tx: Transaction, client: pg.PoolClient, text: string, params: readonly unknown[]) {
    return corked(client, () => {
      this.#sendPending(tx, client);
      return this.#send<R>(client, text, params);
    });
  }

  /**
   * Behind a held write that failed, a statement fails only because the transaction is aborted (25P02): the held
   * write's error is the one that means something.
   */
  async #failure(tx: Transaction, error: unknown): Promise<never> {
    if ((error as { code?: unknown }).code === '25P02') await Promise.allSettled(tx.sent);
    throw tx.failure ? tx.failure.error : error;
  }

  /**
   * A write whose answer the caller does not need (an INSERT of a record, an event, a history entry). Inside a
   * transaction it is held and goes out with the next statement that needs an answer, or with COMMIT, in the same
   * write to the socket: a transaction that only makes such writes costs one round trip, and one made of a single
   * write runs it on its own (autocommit), as atomic as the transaction. Its failure fails the transaction (at
   * COMMIT, or the next statement).
   */
  write(text: string, params: readonly unknown[] = []): Promise<void> {
    const tx = this.#context.getStore();
    if (tx === undefined || tx.released || tx.committed || tx.eager > 0) return this.result(text, params).then(ignore);
    tx.held.push({ text, params });
    return HELD;
  }

  #track(tx: Transaction, sent: Promise<unknown>) {
    tx.sent.push(
      sent.catch((error: unknown) => {
        tx.failure ??= { error };
      }),
    );
  }

  /** Sends BEGIN (the first time) and the held writes on the transaction's client; nothing waits for them. */
  #sendPending(tx: Transaction, client: pg.PoolClient): void {
    tx.began ??= client.query('BEGIN').then(
      () => undefined,
      (e: unknown) => ({ failed: e }),
    );
    for (const h of tx.held.splice(0)) this.#track(tx, this.#send(client, h.text, h.params));
  }

  /** Checks out the transaction's client; BEGIN goes out with the first statement (see #sendPending). */
  #open(tx: Transaction): Promise<pg.PoolClient> {
    tx.opening ??= this.pool.connect().then((client) => {
      // A checked-out client whose connection drops between statements emits 'error', which the pool only listens
      // to on idle clients: unheard, it would end the process. The next statement (or the ROLLBACK) fails anyway.
      client.on('error', ignore);
      tx.client = client;
      if (tx.released) {
        // The caller's work ended (it threw) while the client was on its way: it goes straight back.
        client.off('error', ignore);
        client.release();
        throw new Error('the transaction has ended');
      }
      return client;
    });
    return tx.opening;
  }

  /** The running transaction's client, for statements of several parts (DDL); only inside a transaction. */
  client(): Queryable {
    const tx = this.#context.getStore();
    if (!tx || tx.committed) throw new Error('not inside a transaction');
    const query = async (...args: unknown[]) => {
      const client = await this.#open(tx);
      return corked(client, () => {
        this.#sendPending(tx, client);
        return (client.query as (...a: unknown[]) => Promise<unknown>)(...args);
      });
    };
    return { query } as unknown as Queryable;
  }

  /**
   * Registers `told` to be called, outside the transaction, once the running transaction has committed; false (and
   * nothing registered) when there is none. Synchronous, and called synchronously: no promise per transaction.
   */
  onCommit(told: () => void): boolean {
    const tx = this.#context.getStore();
    if (tx === undefined || tx.committed || tx.released) return false;
    tx.onCommit.add(told);
    return true;
  }

  /**
   * One transaction (joined when already inside one); what it registered with onCommit is told before the caller is
   * answered. What that throws is not the caller's failure (its writes are committed).
   */
  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    if (this.inTransaction) return fn();
    const tx: Transaction = {
      held: [],
      sent: [],
      eager: 0,
      waiting: 0,
      onCommit: new Set(),
      committed: false,
      released: false,
    };
    let broken: unknown;
    this.#active++;
    try {
      const result = await this.#context.run(tx, fn);
      await this.#commit(tx);
      tx.committed = true;
      if (tx.onCommit.size > 0) this.#context.exit(() => tellCommitted(tx.onCommit));
      return result;
    } catch (error) {
      if (tx.opening) {
        const client = await tx.opening.catch(() => undefined);
        // Nothing was sent on a client that never began: nothing to roll back (the held writes are dropped).
        if (client && tx.began) {
          broken = await client.query('ROLLBACK').then(
            () => undefined,
            (e: unknown) => e,
          );
        }
      }
      throw error;
    } finally {
      tx.released = true;
      // On Node 20 an enabled AsyncLocalStorage runs a hook for every promise the process makes; measured on the
      // PostgreSQL bench, reads (no transaction) cost a quarter more with it on. Off while no transaction runs; what
      // a finished transaction left running finds its store released either way.
      if (--this.#active === 0) this.#context.disable();
      if (tx.client) {
        // A connection that could not roll back is closed, not reused.
        tx.client.off('error', ignore);
        tx.client.release(broken instanceof Error ? broken : undefined);
      }
    }
  }

  /** Runs `fn` under a savepoint of the running transaction (see Store.savepoint); on its own outside one. */
  async savepoint<T>(fn: () => Promise<T>): Promise<T> {
    const tx = this.#context.getStore();
    if (!tx || tx.committed || tx.released) return fn();
    const client = await this.#open(tx);
    await corked(client, () => {
      this.#sendPending(tx, client);
      return client.query('SAVEPOINT nf_try');
    });
    // Under a savepoint a write's failure is the caller's to catch, at the write: none is held.
    tx.eager++;
    let result: T;
    try {
      result = await fn();
    } catch (error) {
      await client.query('ROLLBACK TO SAVEPOINT nf_try');
      await client.query('RELEASE SAVEPOINT nf_try');
      throw error;
    } finally {
      tx.eager--;
    }
    await client.query('RELEASE SAVEPOINT nf_try');
    return result;
  }

  /**
   * A few held INSERTs into different tables (a record and its event row) as one statement, each but the last in
   * a CTE: PostgreSQL runs every data-modifying CTE to completion, and one statement is as atomic as the
   * transaction, for a fraction of the client's work of BEGIN, each INSERT and COMMIT. Undefined when they are not
   * all plain INSERTs written with their parameters `$1…$n`, into a table each (then they go as a transaction).
   */
  #merged(held: readonly Held[]): Held | undefined {
    if (held.length > MAX_MERGED) return undefined;
    // Looked up text by text (each a string the process holds already, its hash kept): no key is built per call.
    let node: MergeNode | undefined;
    let level = this.#merges;
    for (const h of held) {
      node = level.get(h.text);
      if (!node) {
        if (this.#mergeCount >= MAX_MERGES) return this.#mergedOf(held, mergedText(held));
        node = { next: new Map() };
        level.set(h.text, node);
        this.#mergeCount++;
      }
      level = node.next;
    }
    if (!node) return undefined;
    if (node.text === undefined) node.text = mergedText(held);
    return this.#mergedOf(held, node.text);
  }

  #mergedOf(held: readonly Held[], text: string | null): Held | undefined {
    if (text === null) return undefined;
    // A loop, not flatMap: on the path of every create with an event, where flatMap's generic path showed in profiles.
    const params: unknown[] = [];
    for (const h of held) for (const p of h.params) params.push(p);
    return { text, params };
  }

  /**
   * COMMIT, pipelined behind the writes still held, in one write to the socket with them (and with BEGIN, when
   * nothing was sent before). A transaction that never needed an answer and holds one write runs it on its own
   * (autocommit); one that holds none and never began sends nothing.
   */
  #commit(tx: Transaction): Promise<void> {
    const held = tx.held;
    if (!tx.opening && held.length > 0) {
      const alone = held.length === 1 ? held[0] : this.#merged(held);
      if (alone) {
        held.length = 0;
        // Not on a lane: each commit waits for its WAL flush, one after the other on one backend, where commits on
        // backends of their own are flushed together (measured: POST at 0.7x of the pool's, bench/RESULTS.md).
        return this.#send(this.pool, alone.text, alone.params).then(ignore);
      }
    }
    if (!tx.opening && held.length === 0) return HELD;
    return this.#commitOn(tx);
  }

  async #commitOn(tx: Transaction): Promise<void> {
    const client = await this.#open(tx);
    const committed = corked(client, () => {
      this.#sendPending(tx, client);
      return client.query('COMMIT');
    });
    const began = await tx.began;
    await Promise.allSettled(tx.sent);
    // After a failed statement the server answers COMMIT with a rollback; the first failure is the caller's.
    await committed.catch((e: unknown) => {
      tx.failure ??= { error: e };
    });
    if (began) throw began.failed;
    if (tx.failure) throw tx.failure.error;
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
    this.#ended = true;
    await Promise.all(this.#lanes.splice(0).map((lane) => lane.client.end().catch(ignore)));
    await this.pool.end();
  }
}
