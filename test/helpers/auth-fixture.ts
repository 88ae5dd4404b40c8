import { createHmac, randomBytes } from 'node:crypto';
import { type Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import Database from 'better-sqlite3';
import { exportPKCS8, exportSPKI, generateKeyPair, importPKCS8, type JWTPayload, SignJWT } from 'jose';
import { expect } from 'vitest';
import { issueApiKey } from '../../src/parts/auth/keys.ts';
import type { Store } from '../../src/storage/index.ts';
import { cpuMsSince } from './cpu-time.ts';
import { pgExec, schemaOf } from './postgres.ts';
import { LEAKS, planOf, type Served, type ServeOptions, servePlan } from './serve-spec.ts';

// One order-desk-like service for the RELIABILITY §2.2 suites (test/auth-attacks.test.ts, test/auth-access.test.ts).
//   key    apiKey in header X-Api-Key        (default for every endpoint, with token and basic)
//   ckey   apiKey in cookie nf_key           (only /notes: the CSRF case A11)
//   token  bearer JWT HS256, env secret      (customers: sub = their Customer id)
//   rsa    bearer JWT RS256, env public key  (only /reports: the algorithm-confusion case A6)
//   basic  users: User (email / password / roles)
// Order has explicit rules with an owner; Address (nested under /customers/{customerId}) and Wish have only
// `owner: customer`, so the contract's owner-only defaults apply to them. Invoice has rules for read and create
// only: deny by default refuses every other action to everyone. Customer.creditLimit is readable and writable by
// admins only; everyone sees Order.discount, only admins set it. The custom endpoints (test/helpers/auth-handlers.ts)
// reach records through ctx.records; events are on, with webhook endpoints, for the side channels.

export const SERVICE = 'authdesk';
export const ISSUER = 'https://auth.test/';
export const AUDIENCE = 'authdesk';
export const RSA_AUDIENCE = 'authdesk-reports';
export const BASIC_REALM = 'Auth desk';

export const JWT_SECRET = `test-secret-${randomBytes(24).toString('hex')}`;
const rsa = await generateKeyPair('RS256', { extractable: true });
/** The RS256 public key the service is configured with, as PEM (what an attacker can also read). */
export const RSA_PUBLIC_PEM = await exportSPKI(rsa.publicKey);
const RSA_PRIVATE_PEM = await exportPKCS8(rsa.privateKey);
process.env.TEST_JWT_SECRET = JWT_SECRET;
process.env.TEST_JWT_PUBLIC_KEY = RSA_PUBLIC_PEM;

export const AUTH_SPEC = `
ninefold: 1
service:
  name: ${SERVICE}
  title: Auth desk
  purpose: RELIABILITY 2.2 authentication and authorisation attacks over real HTTP.
resources:
  Customer:
    idPrefix: cus
    fields:
      email: { type: string, format: email, required: true, unique: true, maxLength: 254 }
      fullName: { type: string, minLength: 1, maxLength: 120, required: true }
      creditLimit: { type: integer, min: 0, readableBy: [admin], writableBy: [admin] }
  Order:
    idPrefix: ord
    fields:
      customer: { type: ref, to: Customer, required: true }
      referrer: { type: ref, to: Customer }
      note: { type: string, maxLength: 200 }
      internalNote: { type: string, maxLength: 200, readableBy: [admin] }
      discount: { type: integer, min: 0, max: 100, default: 0, writableBy: [admin] }
      paymentRef: { type: string, readOnly: true }
    states:
      field: status
      initial: cart
      states: { cart: {}, placed: {}, paid: {}, cancelled: {} }
      final: [paid, cancelled]
      transitions:
        place: { from: cart, to: placed }
        pay:
          from: placed
          to: paid
          roles: [billing]
          input: { paymentRef: { type: string, minLength: 1, required: true } }
        cancel: { from: [cart, placed], to: cancelled }
  Invoice:
    idPrefix: inv
    fields:
      customer: { type: ref, to: Customer, required: true }
      amount: { type: integer, min: 0, required: true }
    states:
      field: status
      initial: draft
      states: { draft: {}, sent: {} }
      final: [sent]
      transitions:
        send: { from: draft, to: sent }
  Address:
    idPrefix: adr
    fields:
      customer: { type: ref, to: Customer, required: true }
      line1: { type: string, minLength: 1, maxLength: 200, required: true }
  Wish:
    idPrefix: wsh
    fields:
      customer: { type: ref, to: Customer, required: true }
      item: { type: string, minLength: 1, maxLength: 200, required: true }
  User:
    idPrefix: usr
    fields:
      email: { type: string, format: email, required: true, unique: true, maxLength: 254 }
      password: { type: string, minLength: 1, maxLength: 200, required: true, writeOnly: true }
      roles: { type: array, maxItems: 4, items: { type: string, maxLength: 20 } }
  Note:
    idPrefix: nte
    fields:
      text: { type: string, minLength: 1, maxLength: 200, required: true }
  Report:
    idPrefix: rep
    fields:
      title: { type: string, minLength: 1, maxLength: 200, required: true }
endpoints:
  Customer:
    operations: [list, get, create, update, delete]
    path: /customers
    list: { filter: [email], sort: [createdAt, fullName] }
    overrides: { delete: { roles: [admin] } }
  Order:
    operations: [list, get, create, update, replace, delete]
    path: /orders
    list:
      filter: [status, customer, internalNote]
      sort: [createdAt, internalNote]
      expand: [customer, referrer]
      pageSize: { default: 20, max: 100 }
  Invoice:
    operations: [list, get, create, update, delete]
    path: /invoices
  Address:
    operations: [list, get, create, update, delete]
    path: /customers/{customerId}/addresses
  Wish:
    operations: [list, get, create, update, delete]
    path: /wishes
  User:
    operations: [list, get, create, update, delete]
    path: /users
    list: { filter: [email] }
  Note:
    operations: [list, get, create, update, delete]
    path: /notes
    require: [ckey]
  Report:
    operations: [list, get, create]
    path: /reports
    require: [rsa]
  custom:
    - name: orderSummary
      method: GET
      path: /orders/{id}/summary
      handler: ./test/helpers/auth-handlers.ts#orderSummary
      request: { params: { id: { type: string, required: true } } }
      response:
        fields: { id: { type: string }, customer: { type: string }, status: { type: string }, note: { type: string } }
    - name: annotateOrder
      method: POST
      path: /orders/{id}/annotate
      handler: ./test/helpers/auth-handlers.ts#annotateOrder
      request: { params: { id: { type: string, required: true } }, body: { note: { type: string, maxLength: 200 } } }
      response: { fields: { id: { type: string }, note: { type: string } } }
    - name: orderCount
      method: GET
      path: /order-count
      handler: ./test/helpers/auth-handlers.ts#orderCount
      response: { fields: { total: { type: integer }, ids: { type: array, items: { type: string } } } }
    - name: updateProfile
      method: POST
      path: /customers/{id}/profile
      handler: ./test/helpers/auth-handlers.ts#updateProfile
      request:
        params: { id: { type: string, required: true } }
        body: { fullName: { type: string, minLength: 1, maxLength: 120 }, creditLimit: { type: integer, min: 0 } }
      response: { fields: { id: { type: string }, fullName: { type: string } } }
    - name: discardInvoice
      method: POST
      path: /invoices/{id}/discard
      handler: ./test/helpers/auth-handlers.ts#discardInvoice
      request: { params: { id: { type: string, required: true } } }
    - name: handlerContext
      method: GET
      path: /handler-context
      handler: ./test/helpers/auth-handlers.ts#handlerContext
      response: { fields: { keys: { type: array, items: { type: string } }, store: { type: boolean } } }
auth:
  schemes:
    key: { type: apiKey, in: header, name: X-Api-Key }
    ckey: { type: apiKey, in: cookie, name: nf_key }
    token:
      type: bearer
      format: jwt
      algorithms: [HS256]
      secret: env:TEST_JWT_SECRET
      issuer: ${ISSUER}
      audience: ${AUDIENCE}
    rsa:
      type: bearer
      format: jwt
      algorithms: [RS256]
      publicKey: env:TEST_JWT_PUBLIC_KEY
      issuer: ${ISSUER}
      audience: ${RSA_AUDIENCE}
    basic:
      type: basic
      users: User
      usernameField: email
      passwordField: password
      rolesField: roles
      realm: ${BASIC_REALM}
  require: [key, token, basic]
  roles:
    admin: Staff with full access.
    billing: Staff who record payments.
    support: Staff who help customers.
    customer: A signed-in customer.
  rules:
    Customer:
      list: "principal.roles.exists(r, r in ['admin', 'support']) || record.id == principal.subject"
      read: "principal.roles.exists(r, r in ['admin', 'support']) || record.id == principal.subject"
      create: "'admin' in principal.roles"
      update: "'admin' in principal.roles || record.id == principal.subject"
      delete: "'admin' in principal.roles"
    Order:
      owner: customer
      list: "principal.roles.exists(r, r in ['admin', 'billing', 'support']) || record.customer == principal.subject"
      read: "principal.roles.exists(r, r in ['admin', 'billing', 'support']) || record.customer == principal.subject"
      create: "'admin' in principal.roles || record.customer == principal.subject"
      update: "'admin' in principal.roles || record.customer == principal.subject"
      delete: "'admin' in principal.roles"
      transitions:
        place: "record.customer == principal.subject"
        pay: "true"
        cancel: "principal.roles.exists(r, r in ['admin', 'billing']) || record.customer == principal.subject"
    Invoice:
      read: "principal.roles.exists(r, r in ['admin', 'billing']) || record.customer == principal.subject"
      create: "'admin' in principal.roles"
    Address:
      owner: customer
    Wish:
      owner: customer
    User:
      list: "'admin' in principal.roles || record.id == principal.subject"
      read: "'admin' in principal.roles || record.id == principal.subject"
      create: "'admin' in principal.roles"
      update: "'admin' in principal.roles"
      delete: "'admin' in principal.roles"
events:
  auto: true
  webhooks: { allowPrivateTargets: true }
  declared:
    Audit.noted: { description: Never emitted; webhook endpoints of the tests subscribe to it alone. }
`;

/** A well-formed id of `prefix` that no record has. */
export const missingId = (prefix: string): string => `${prefix}_01J${'Z'.repeat(23)}`;

// ---------------------------------------------------------------- HTTP

export interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** Header lines as sent, lower-cased names: several lines of one header stay separate. */
  readonly lines: ReadonlyArray<readonly [string, string]>;
  readonly text: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON answers
  readonly body: any;
  /** True when the request went over a connection an earlier request had used. */
  readonly reusedSocket: boolean;
  /** CPU time this process (client and in-process server) spent from the request to its answer: see cpu-time.ts. */
  readonly cpuMs: number;
}

export interface SendOptions {
  readonly headers?: Record<string, string | string[]>;
  readonly json?: unknown;
  readonly body?: string | Buffer;
  /** An agent, or false for a connection of its own (closed after the answer). */
  readonly agent?: Agent | false;
  /** Source address (any 127.x.y.z on Linux): lets a test look like several clients. */
  readonly localAddress?: string;
}

/** One request through node:http: full control of headers (Origin, Cookie, repeated lines), raw answer headers. */
export const send = (base: string, method: string, path: string, opts: SendOptions = {}): Promise<Answer> => {
  const headers: Record<string, string | string[]> = { ...(opts.headers ?? {}) };
  let body = opts.body;
  if (opts.json !== undefined) {
    body = JSON.stringify(opts.json);
    if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type'))
      headers['content-type'] = 'application/json';
  }
  const started = process.cpuUsage();
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${base}${path}`,
      {
        method,
        headers,
        ...(opts.agent !== undefined ? { agent: opts.agent } : {}),
        ...(opts.localAddress ? { localAddress: opts.localAddress } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            parsed = undefined;
          }
          const lines: Array<[string, string]> = [];
          for (let i = 0; i + 1 < res.rawHeaders.length; i += 2)
            lines.push([(res.rawHeaders[i] as string).toLowerCase(), res.rawHeaders[i + 1] as string]);
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            lines,
            text,
            body: parsed,
            reusedSocket: req.reusedSocket,
            cpuMs: cpuMsSince(started),
          });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
};

/** Every line of one answer header, in order. */
export const headerLines = (r: Answer, name: string): string[] =>
  r.lines.filter(([n]) => n === name.toLowerCase()).map(([, v]) => v);

/** Text a client must never see: stack frames, file paths, SQL, library and error-class names. */
export const INTERNALS = /Error:|sqlite|\.ts\b|\.js\b|node:internal|\/(home|usr|tmp|work|opt|var)\//i;

/**
 * A refused request: the status, RFC 9457 problem+json with `status` equal to the HTTP status, the code,
 * and nothing internal in the text.
 */
export const expectProblem = (r: Answer, status: number, code: string): void => {
  const context = `${r.status} ${r.text.slice(0, 400)}`;
  expect(r.status, context).toBe(status);
  expect(String(r.headers['content-type']), context).toMatch(/^application\/problem\+json/);
  expect(r.body, context).toBeTypeOf('object');
  expect(r.body.status, context).toBe(status);
  expect(r.body.code, context).toBe(code);
  // Record ids are random: one may spell `ajv` or `SQLite` by chance.
  const text = r.text.replace(/\b[a-z]+_[0-9A-HJKMNP-TV-Z]{26}\b/g, '{id}');
  expect(text).not.toMatch(LEAKS);
  expect(text).not.toMatch(INTERNALS);
};

/** A success: the status, and a JSON body. */
export const expectOk = (r: Answer, status = 200): void => {
  expect(r.status, `${r.status} ${r.text.slice(0, 400)}`).toBe(status);
};

/**
 * Two answers are the same (status, body, headers but date / request id / length) once each id is replaced by a
 * placeholder; an empty id compares the texts as they are.
 */
export const sameProblem = (a: Answer, aId: string, b: Answer, bId: string): void => {
  const norm = (text: string, id: string) => (id ? text.replaceAll(id, '{id}') : text);
  expect(a.status).toBe(b.status);
  expect(norm(a.text, aId)).toBe(norm(b.text, bId));
  const shape = (r: Answer) =>
    r.lines
      .filter(([n]) => !['date', 'x-request-id', 'content-length', 'connection', 'keep-alive'].includes(n))
      .map(([n, v]) => `${n}: ${v}`)
      .sort();
  expect(shape(a)).toEqual(shape(b));
};

// ---------------------------------------------------------------- credentials

export const keyHeader = (key: string) => ({ 'x-api-key': key });
export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
export const basic = (user: string, password: string) => ({
  authorization: `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`,
});

/**
 * The secret of an issued key, cut after the id the issuing call returned. The secret is base64url and may itself
 * hold `_`, so a split on the last (or any) `_` would cut it short about once in two keys.
 */
export const secretOf = (key: string, id: string): string => {
  const prefix = `nfk_${id}_`;
  if (!key.startsWith(prefix)) throw new Error(`not a key of ${id}: ${key}`);
  return key.slice(prefix.length);
};

/** An API key issued straight into the store. */
export const mintKey = async (
  store: Store,
  roles: string[],
  opts: { subject?: string; expiresInMs?: number } = {},
): Promise<{ id: string; key: string; subject: string }> => {
  const { record, key } = await issueApiKey(store, { roles, ...opts });
  return { id: record.id, key, subject: record.subject };
};

const nowSeconds = () => Math.floor(Date.now() / 1000);

/**
 * An HS256 token as the identity provider would issue it for this service: iss, aud, sub, roles, exp in 10 min.
 * `claims` overrides or adds claims; a claim set to undefined is left out.
 */
export const signToken = async (
  claims: Record<string, unknown>,
  opts: { secret?: string; alg?: string; header?: Record<string, unknown> } = {},
): Promise<string> => {
  const payload: Record<string, unknown> = {
    iss: ISSUER,
    aud: AUDIENCE,
    iat: nowSeconds(),
    exp: nowSeconds() + 600,
    roles: ['customer'],
    ...claims,
  };
  for (const [k, v] of Object.entries(payload)) if (v === undefined) delete payload[k];
  return new SignJWT(payload as JWTPayload)
    .setProtectedHeader({ alg: opts.alg ?? 'HS256', typ: 'JWT', ...(opts.header ?? {}) })
    .sign(new TextEncoder().encode(opts.secret ?? JWT_SECRET));
};

/** An RS256 token for the /reports scheme, signed with the service's real private key (or another one). */
export const signRsaToken = async (
  claims: Record<string, unknown>,
  opts: { key?: Parameters<SignJWT['sign']>[0]; header?: Record<string, unknown>; alg?: string } = {},
): Promise<string> => {
  const payload: Record<string, unknown> = {
    iss: ISSUER,
    aud: RSA_AUDIENCE,
    iat: nowSeconds(),
    exp: nowSeconds() + 600,
    roles: ['admin'],
    ...claims,
  };
  const alg = opts.alg ?? 'RS256';
  // The service's own private key, bound to another algorithm when asked (RS512, PS256: same key, other alg).
  const key = opts.key ?? (alg === 'RS256' ? rsa.privateKey : await importPKCS8(RSA_PRIVATE_PEM, alg));
  return new SignJWT(payload as JWTPayload).setProtectedHeader({ alg, typ: 'JWT', ...(opts.header ?? {}) }).sign(key);
};

export const b64url = (data: string | Buffer): string => Buffer.from(data).toString('base64url');

/** A JWT assembled by hand: header and payload as given (objects are JSON-encoded), signature as given. */
export const rawJwt = (header: unknown, payload: unknown, signature = ''): string =>
  `${b64url(typeof header === 'string' ? header : JSON.stringify(header))}.${b64url(
    typeof payload === 'string' ? payload : JSON.stringify(payload),
  )}.${signature}`;

/** A JWT whose header and payload are any text, HMAC-SHA256-signed with `secret` (the service's by default). */
export const hmacJwt = (header: unknown, payload: unknown, secret: string | Buffer = JWT_SECRET): string => {
  const unsigned = rawJwt(header, payload).slice(0, -1);
  return `${unsigned}.${createHmac('sha256', secret).update(unsigned).digest('base64url')}`;
};

/** Claims of a valid customer token, for hand-made tokens. */
export const validClaims = (sub: string, extra: Record<string, unknown> = {}) => ({
  iss: ISSUER,
  aud: AUDIENCE,
  sub,
  roles: ['customer'],
  iat: nowSeconds(),
  exp: nowSeconds() + 600,
  ...extra,
});

// ---------------------------------------------------------------- the service and its people

export interface World {
  readonly s: Served;
  readonly url: string;
  /** Staff keys (header X-Api-Key). */
  readonly admin: { key: string; subject: string; id: string };
  readonly billing: { key: string; subject: string; id: string };
  readonly support: { key: string; subject: string; id: string };
  /** Two customers, each with a Customer record and an HS256 token whose sub is that record's id. */
  readonly a: { id: string; token: string; email: string };
  readonly b: { id: string; token: string; email: string };
  /** Headers of an admin call. */
  readonly asAdmin: Record<string, string>;
}

/** Serves the auth spec (or a variant of it) on a fresh database and sets up staff keys and two customers A and B. */
export const startAuthService = async (opts: ServeOptions & { readonly spec?: string } = {}): Promise<World> => {
  const { spec = AUTH_SPEC, ...serve } = opts;
  const s = await servePlan(planOf(spec), serve);
  const admin = await mintKey(s.store, ['admin'], { subject: 'staff-admin' });
  const billing = await mintKey(s.store, ['billing'], { subject: 'staff-billing' });
  const support = await mintKey(s.store, ['support'], { subject: 'staff-support' });
  const asAdmin = keyHeader(admin.key);
  const customer = async (email: string, fullName: string) => {
    const r = await send(s.url, 'POST', '/customers', {
      headers: asAdmin,
      json: { email, fullName, creditLimit: 500 },
    });
    expect(r.status, r.text).toBe(201);
    const id = r.body.id as string;
    return { id, token: await signToken({ sub: id }), email };
  };
  const a = await customer('ada@example.com', 'Ada');
  const b = await customer('bob@example.com', 'Bob');
  return { s, url: s.url, admin, billing, support, a, b, asAdmin };
};

/** Creates a User (as admin) for the basic scheme; the answer's id is the principal's subject. */
export const createUser = async (w: World, email: string, password: string, roles: string[]): Promise<string> => {
  const r = await send(w.url, 'POST', '/users', { headers: w.asAdmin, json: { email, password, roles } });
  expect(r.status, r.text).toBe(201);
  return r.body.id as string;
};

/** Everything the service logs from now on (pino lines), read from the logger's own stream. */
export const captureLogs = (s: Served): string[] => {
  const lines: string[] = [];
  let target: object | null = s.app.log as object;
  while (target) {
    const sym = Object.getOwnPropertySymbols(target).find((x) => x.description === 'pino.stream');
    if (sym) {
      (target as Record<symbol, unknown>)[sym] = { write: (line: string) => lines.push(line) };
      return lines;
    }
    target = Object.getPrototypeOf(target) as object | null;
  }
  throw new Error('no pino stream found on the logger');
};

// ---------------------------------------------------------------- the database as it is on disk

/** Every row of one table, read through a separate connection (either backend). */
export const rowsOf = async (s: Served, table: string): Promise<Array<Record<string, unknown>>> => {
  const quoted = `"${table.replaceAll('"', '""')}"`;
  if (s.dbPath.startsWith('postgres')) {
    return (await pgExec(`SELECT * FROM "${schemaOf(s.dbPath)}".${quoted}`)).rows as Array<Record<string, unknown>>;
  }
  const db = new Database(s.dbPath, { readonly: true, fileMustExist: true });
  try {
    return db.prepare(`SELECT * FROM ${quoted}`).all() as Array<Record<string, unknown>>;
  } finally {
    db.close();
  }
};

/** The tables of the database (the engine's and the records'), by name. */
const tablesOf = async (s: Served): Promise<string[]> => {
  if (s.dbPath.startsWith('postgres')) {
    const { rows } = await pgExec(
      'SELECT table_name AS name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name',
      [schemaOf(s.dbPath)],
    );
    return rows.map((r) => r.name as string);
  }
  const db = new Database(s.dbPath, { readonly: true, fileMustExist: true });
  try {
    const rows = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
      .all() as Array<{ name: string }>;
    return rows.map((r) => r.name);
  } finally {
    db.close();
  }
};

/**
 * Every table and its rows (sorted), as text: equal before and after means nothing was written or changed. The
 * counters of the failed-login limiter are left out: a refused login counts there, and that is no data written.
 */
/**
 * Columns the engine's own machinery moves whatever callers do: the event sequencer numbers committed events (on
 * PostgreSQL a reader of the event log runs it first, so a read can number an earlier write's events), and the
 * delivery worker moves endpoint cursors and takes leases. They are left out of the "nothing changed" snapshot.
 */
const BOOKKEEPING: Record<string, string[]> = {
  _ninefold_events: ['seq'],
  _ninefold_webhook_endpoints: ['cursor', 'lease_owner', 'lease_until'],
  _ninefold_deliveries: ['lease_owner', 'lease_until'],
  _ninefold_timers: ['owner', 'lease_until'],
};

export const dbState = async (s: Served): Promise<Record<string, string[]>> => {
  const state: Record<string, string[]> = {};
  for (const name of (await tablesOf(s)).filter((t) => t !== '_ninefold_counters')) {
    const moving = BOOKKEEPING[name] ?? [];
    state[name] = (await rowsOf(s, name))
      .map((row) => JSON.stringify(Object.fromEntries(Object.entries(row).filter(([k]) => !moving.includes(k)))))
      .sort();
  }
  return state;
};
