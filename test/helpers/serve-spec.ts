import { mkdtempSync, rmSync } from 'node:fs';
import { request as rawHttp } from 'node:http';
import { connect, type LookupFunction } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { FastifyInstance } from 'fastify';
import { buildPlan } from '../../src/plan/build-plan.ts';
import type { Plan } from '../../src/plan/types.ts';
import { createServer } from '../../src/runtime/server.ts';
import { checkSource } from '../../src/spec/check.ts';
import { parseSpecText } from '../../src/spec/load.ts';
import { SqliteStore, type Store } from '../../src/storage/index.ts';
import { PostgresStore } from '../../src/storage/postgres/postgres-store.ts';
import { freshPgUrl, pgExec, schemaOf } from './postgres.ts';

export interface Served {
  readonly url: string;
  readonly app: FastifyInstance;
  readonly store: Store;
  readonly plan: Plan;
  /** The SQLite file, or the PostgreSQL URL (with its schema) when NF_STORE=postgres. */
  readonly dbPath: string;
  /** Rows in a table, read through a separate connection: what is really committed. */
  countRows(table: string): Promise<number>;
  /** Stops the server and the store; keeps the database file unless `remove` is set. */
  close(options?: { remove?: boolean }): Promise<void>;
}

/** Parses and checks an inline spec; any diagnostic error fails the test loudly. */
/** An inline spec's `auth:` block: API keys in X-Api-Key, one role (agent), Ticket records owned by `owner`. */
export const TICKET_KEY_AUTH = `auth:
  schemes: { key: { type: apiKey, in: header, name: X-Api-Key } }
  require: [key]
  roles: { agent: Works tickets. }
  rules:
    Ticket:
      owner: owner`;

export const planOf = (yaml: string): Plan => {
  const parsed = parseSpecText(yaml, 'inline.yaml');
  const checked = checkSource({ ...parsed, dir: process.cwd() });
  const errors = checked.diagnostics.filter((d) => d.severity === 'error');
  if (!checked.spec || errors.length) {
    throw new Error(
      `inline spec has errors:\n${errors.map((d) => `${d.code} ${d.pointer} (line ${d.line}): ${d.message}`).join('\n')}`,
    );
  }
  return buildPlan(checked.spec, process.cwd());
};

export const tempDbPath = (): string => join(mkdtempSync(join(tmpdir(), 'ninefold-e2e-')), 'service.db');

export interface ServeOptions {
  dbPath?: string;
  allowDataLoss?: boolean;
  logLevel?: string;
  timerPollMs?: number;
  webhookPollMs?: number;
  /** The service's clock (tests jump it forward). */
  now?: () => Date;
  /** The resolver webhook deliveries (and registrations) go through: a DNS stub. */
  lookup?: LookupFunction;
  /** Where the server's log lines go (a test reads them). */
  logStream?: { write(line: string): void };
  /** Redis for shared rate counters, and the key prefix of this test's keys. */
  redisUrl?: string;
  redisPrefix?: string;
  /** The store to serve from, instead of a new store on `dbPath` (a test wraps one to inject faults). */
  store?: (opened: Store) => Store;
  /** The event-loop lag `limits.overload` reads, in ms (a test sets it instead of blocking the loop). */
  eventLoopLag?: () => number;
}

/** The backend the HTTP suites run on: SQLite, or PostgreSQL with NF_STORE=postgres (`npm run test:postgres`). */
export const ON_POSTGRES = process.env.NF_STORE === 'postgres';

/** A fresh database of the backend under test: a temporary SQLite file, or a PostgreSQL schema of its own. */
export const freshDatabase = (): string => (ON_POSTGRES ? freshPgUrl() : tempDbPath());

const openDatabase = (target: string): Store =>
  target.startsWith('postgres') ? new PostgresStore({ url: target }) : new SqliteStore({ path: target });

const countIn = async (target: string, table: string): Promise<number> => {
  const quoted = `"${table.replaceAll('"', '""')}"`;
  if (target.startsWith('postgres')) {
    const { rows } = await pgExec(`SELECT count(*)::int AS n FROM "${schemaOf(target)}".${quoted}`);
    return rows[0]?.n as number;
  }
  const db = new Database(target, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare(`SELECT count(*) AS n FROM ${quoted}`).get() as { n: number }).n;
  } finally {
    db.close();
  }
};

/** Serves a plan on a real port over a fresh database of the backend under test (or the one `dbPath` names). */
export const servePlan = async (plan: Plan, opts: ServeOptions = {}): Promise<Served> => {
  const dbPath = opts.dbPath ?? freshDatabase();
  const store = openDatabase(dbPath);
  await store.migrate(plan, { allowDataLoss: opts.allowDataLoss === true });
  const app = await createServer(plan, {
    store: opts.store ? opts.store(store) : store,
    ...(opts.logStream ? { logStream: opts.logStream } : {}),
    logLevel: opts.logLevel ?? process.env.NF_LOG ?? 'silent',
    ...(opts.timerPollMs !== undefined ? { timerPollMs: opts.timerPollMs } : {}),
    ...(opts.webhookPollMs !== undefined ? { webhookPollMs: opts.webhookPollMs } : {}),
    ...(opts.now ? { now: opts.now } : {}),
    ...(opts.lookup ? { lookup: opts.lookup } : {}),
    ...(opts.redisUrl ? { redisUrl: opts.redisUrl } : {}),
    ...(opts.redisPrefix ? { redisPrefix: opts.redisPrefix } : {}),
    ...(opts.eventLoopLag ? { eventLoopLag: opts.eventLoopLag } : {}),
  });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    url,
    app,
    store,
    plan,
    dbPath,
    countRows: (table) => countIn(dbPath, table),
    async close({ remove = false } = {}) {
      await app.close();
      await store.close();
      if (!remove) return;
      if (dbPath.startsWith('postgres')) await pgExec(`DROP SCHEMA IF EXISTS "${schemaOf(dbPath)}" CASCADE`);
      else rmSync(join(dbPath, '..'), { recursive: true, force: true });
    },
  };
};

/** Serves an inline spec on a real port over a fresh database of the backend under test. */
export const serveSpec = (yaml: string, opts: ServeOptions = {}): Promise<Served> => servePlan(planOf(yaml), opts);

export interface JsonAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON answers
  readonly body: any;
}

/** One HTTP call with fetch; `json` is sent as application/json. */
const defaultHeaders = new Map<string, Record<string, string>>();

/** Headers `call` sends to this base URL unless a call gives its own (a staff API key, say). */
export const useHeaders = (base: string, headers: Record<string, string>) => defaultHeaders.set(base, headers);

export const call = async (
  base: string,
  method: string,
  path: string,
  init: { json?: unknown; body?: string | Uint8Array; headers?: Record<string, string> } = {},
): Promise<JsonAnswer> => {
  const headers: Record<string, string> = { ...defaultHeaders.get(base), ...(init.headers ?? {}) };
  let body: string | Uint8Array | undefined = init.body;
  if (init.json !== undefined) {
    body = JSON.stringify(init.json);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(`${base}${path}`, { method, headers, body });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, text, body: parsed };
};

/** Sends bytes on a raw socket and returns everything the server answered before closing (or the timeout). */
export const rawRequest = (url: string, bytes: string | Buffer, timeoutMs = 3000): Promise<string> => {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(Buffer.concat(chunks).toString('utf8'));
    };
    const timer = setTimeout(finish, timeoutMs);
    socket.on('data', (c) => chunks.push(c));
    socket.on('end', finish);
    socket.on('error', finish);
    socket.on('connect', () => socket.write(bytes));
  });
};

/** A request through node:http, for bodies and headers fetch would change (raw bytes, no Content-Type). */
export const rawSend = (
  url: string,
  method: string,
  path: string,
  body: Buffer | string | undefined,
  headers: Record<string, string> = { 'content-type': 'application/json' },
) =>
  new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = rawHttp(`${url}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });

/**
 * Nothing a client should ever see: stack frames, file paths, SQL, library names. A library name counts only where
 * no word character comes before it: record ids are random letters, and one in about two thousand holds `AJV`.
 */
export const LEAKS = /( {4}at |\/work\/|node_modules|SQLITE|SELECT |(?<!\w)fastify|(?<!\w)ajv)/i;
