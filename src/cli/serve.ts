import { existsSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { createDrain, DEFAULT_GRACE_MS } from '../runtime/drain.ts';
import { precompileModule } from '../spec/import-module.ts';
import type { Store, StoreError } from '../storage/store.ts';
import { type Command, HELP_OPTION, readArgs, usageError } from './command.ts';
import { loadPlanOrReport } from './load-plan.ts';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const OPTIONS = {
  port: {
    type: 'string',
    value: 'N',
    env: 'PORT',
    default: '3000',
    description: 'TCP port; 0 lets the system pick one',
  },
  host: { type: 'string', value: 'H', env: 'HOST', default: '127.0.0.1', description: 'address to listen on' },
  db: {
    type: 'string',
    value: 'PATH|URL',
    env: ['NINEFOLD_DATABASE_URL', 'NINEFOLD_DB'],
    defaultText: '<service name>.db',
    description: 'a SQLite file or a postgres:// URL (with an optional ?schema=); created and migrated when needed',
  },
  'db-pool': {
    type: 'string',
    value: 'N',
    env: 'NINEFOLD_DB_POOL',
    default: '10',
    description: 'PostgreSQL: connections each instance keeps in its pool (1 to 1000)',
  },
  'db-statement-timeout': {
    type: 'string',
    value: 'S',
    env: 'NINEFOLD_DB_STATEMENT_TIMEOUT',
    default: '10',
    description: 'PostgreSQL: seconds a statement may run before it is cancelled (answered 503 busy)',
  },
  'allow-data-loss': {
    type: 'boolean',
    description: 'let a migration drop columns or tables whose data the new spec no longer has',
  },
  durability: {
    type: 'string',
    value: 'MODE',
    choices: ['normal', 'full'],
    env: 'NINEFOLD_DURABILITY',
    default: 'normal',
    description: 'full syncs every commit to disk; normal may lose the last commits on power loss',
  },
  grace: {
    type: 'string',
    value: 'S',
    env: 'NINEFOLD_GRACE',
    default: String(DEFAULT_GRACE_MS / 1000),
    description: 'seconds a shutdown (SIGTERM, SIGINT) waits for in-flight requests and deliveries before cutting them',
  },
  'log-level': {
    type: 'string',
    value: 'L',
    choices: LOG_LEVELS,
    env: 'LOG_LEVEL',
    default: 'info',
    description: 'the least level logged',
  },
  ...HELP_OPTION,
} as const;

/** A TCP port: a whole number from 0 (the system picks one) to 65535. */
const portOf = (text: string): number | undefined => {
  const port = /^\d{1,5}$/.test(text) ? Number(text) : Number.NaN;
  return port <= 65535 ? port : undefined;
};

/** The database file and its WAL companions, when this start created them and failed before serving. */
const removeNewDatabase = (dbPath: string) => {
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${dbPath}${suffix}`, { force: true });
};

/**
 * A store's failure as the operator reads it: what it means to the service, then what the database itself said
 * (`database "orders" does not exist`, `connect ECONNREFUSED 127.0.0.1:5432`; clients never see it), and where.
 */
export const storeProblem = (error: StoreError, target?: string): string => {
  const cause = error.cause as { message?: unknown; code?: unknown } | undefined;
  const said = typeof cause?.message === 'string' ? cause.message : '';
  let text = said && !error.message.includes(said) ? `${error.message}: ${said}` : error.message;
  // PostgreSQL's invalid_catalog_name: the database in the URL was never created.
  if (cause?.code === '3D000') text += ' (create it first, e.g. `createdb -h <host> -U <user> <name>`)';
  return target && !text.includes(target) ? `cannot open the database ${target}: ${text}` : text;
};

const listenProblem = (error: unknown, host: string, port: number): string => {
  const code = (error as NodeJS.ErrnoException).code;
  const where = `${host}:${port}`;
  if (code === 'EADDRINUSE') return `cannot listen on ${where}: the port is in use (choose another with --port)`;
  if (code === 'EACCES') return `cannot listen on ${where}: permission denied (ports below 1024 need privileges)`;
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND')
    return `cannot listen on ${where}: no such address on this machine`;
  return `cannot listen on ${where}: ${error instanceof Error ? error.message : String(error)}`;
};

export const serveCommand: Command<typeof OPTIONS> = {
  name: 'serve',
  summary: 'serve the spec as a running HTTP service (SQLite by default)',
  args: '<spec>',
  options: OPTIONS,
  notes: ['The command line is read in full before anything is written: a wrong option creates no database file.'],
  async run(args) {
    const read = readArgs(this, args, { min: 1, max: 1 });
    if (typeof read === 'number') return read;
    const { values, positionals } = read;
    const port = portOf(values.port ?? '');
    if (port === undefined)
      return usageError(this, `--port must be a whole number from 0 to 65535 (got "${values.port}")`);
    const host = values.host ?? '127.0.0.1';
    const poolSize = Number(values['db-pool']);
    if (!Number.isInteger(poolSize) || poolSize < 1 || poolSize > 1000)
      return usageError(this, `--db-pool must be a whole number from 1 to 1000 (got "${values['db-pool']}")`);
    const statementTimeout = Number(values['db-statement-timeout']);
    if (!(statementTimeout > 0))
      return usageError(
        this,
        `--db-statement-timeout must be a number of seconds above 0 (got "${values['db-statement-timeout']}")`,
      );
    const grace = Number(values.grace);
    if (!(grace >= 0))
      return usageError(this, `--grace must be a number of seconds, 0 or more (got "${values.grace}")`);
    const plan = await loadPlanOrReport(positionals[0] ?? '');
    if (!plan) return 1;
    // TypeScript handlers compile in esbuild's process while the server's modules load and the database migrates.
    for (const endpoint of plan.custom) precompileModule(resolve(plan.dir, endpoint.handler.module));
    const durability = values.durability === 'full' ? 'FULL' : 'NORMAL';
    // The server and the store are loaded only now: `serve --help` and a wrong command line stay quick.
    const [{ createServer }, { shutDown }, { databaseTarget, isPostgresUrl, openStore, shownTarget, StoreError }] =
      await Promise.all([
        import('../runtime/server.ts'),
        import('../runtime/shutdown.ts'),
        import('../storage/index.ts'),
      ]);
    const dbPath = databaseTarget(values.db ?? `${plan.service.name}.db`);
    const created = !isPostgresUrl(dbPath) && !existsSync(dbPath);
    let store: Store;
    try {
      store = await openStore(dbPath, {
        synchronous: durability,
        poolSize,
        statementTimeoutMs: Math.round(statementTimeout * 1000),
      });
    } catch (error) {
      if (!(error instanceof StoreError)) throw error;
      process.stderr.write(`ninefold serve: ${storeProblem(error, shownTarget(dbPath))}\n`);
      return 1;
    }
    try {
      const report = await store.migrate(plan, { allowDataLoss: values['allow-data-loss'] === true });
      for (const line of [...report.dropped.map((f) => `${f} dropped`), ...report.changed]) {
        process.stdout.write(`migrated: ${line}\n`);
      }
    } catch (error) {
      await store.close();
      if (!(error instanceof StoreError)) throw error;
      process.stderr.write(
        error.kind === 'migration-refused'
          ? `${error.message}\n`
          : // PostgreSQL's first statement is its first connection: a server it cannot reach was never migrated.
            error.kind === 'unavailable' && isPostgresUrl(dbPath)
            ? `ninefold serve: ${storeProblem(error, shownTarget(dbPath))}\n`
            : `ninefold serve: cannot migrate the database ${shownTarget(dbPath)}: ${storeProblem(error)}\n`,
      );
      return 1;
    }
    const drain = createDrain(grace * 1000);
    const redisUrl = process.env.NINEFOLD_REDIS_URL;
    const app = await createServer(plan, {
      store,
      drain,
      logLevel: values['log-level'] ?? 'info',
      ...(redisUrl ? { redisUrl } : {}),
    });
    drain.watch(app.server);
    let address: string;
    try {
      address = await app.listen({ port, host });
    } catch (error) {
      // Nothing was served: stop the workers, close the store, and leave no new database file behind.
      await app.close().catch(() => undefined);
      await store.close().catch(() => undefined);
      if (created) removeNewDatabase(dbPath);
      process.stderr.write(`ninefold serve: ${listenProblem(error, host, port)}\n`);
      return 1;
    }
    process.stdout.write(
      `${plan.service.title} is serving at ${address}\n  docs:     ${address}/docs\n  spec:     ${address}/docs/spec\n  openapi:  ${address}/openapi.json\n  database: ${shownTarget(dbPath)}\n`,
    );
    return new Promise<number>((done) => {
      let stopping = false;
      const stop = async (signal: string) => {
        if (stopping) return;
        stopping = true;
        app.log.info({ signal }, 'shutting down: finishing in-flight requests');
        const outcome = await shutDown(app, store, drain);
        if (outcome.line) app.log[outcome.code === 0 ? 'warn' : 'error']({ signal }, `shut down: ${outcome.line}`);
        // Work cut at the end of the grace (a webhook delivery waiting for its receiver) would hold the process.
        if (outcome.cut) process.exit(outcome.code);
        done(outcome.code);
      };
      process.once('SIGTERM', () => void stop('SIGTERM'));
      process.once('SIGINT', () => void stop('SIGINT'));
    });
  },
};
