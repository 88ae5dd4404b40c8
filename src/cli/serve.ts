import { parseArgs } from 'node:util';
import { createServer } from '../runtime/server.ts';
import { databaseTarget, openStore, type Store, StoreError, shownTarget } from '../storage/index.ts';
import { type Command, HELP_OPTION, usageError } from './command.ts';
import { loadPlanOrReport } from './load-plan.ts';

export const serveCommand: Command = {
  summary: 'serve the spec as a running HTTP service (SQLite by default)',
  usage:
    'serve <spec> [--port N] [--host H] [--db PATH|postgres://…] [--allow-data-loss] [--durability normal|full] [--log-level L]',
  async run(args) {
    const { values, positionals } = parseArgs({
      args,
      options: {
        ...HELP_OPTION,
        port: { type: 'string' },
        host: { type: 'string' },
        db: { type: 'string' },
        'allow-data-loss': { type: 'boolean' },
        durability: { type: 'string' },
        'log-level': { type: 'string' },
      },
      allowPositionals: true,
    });
    const [file] = positionals;
    if (values.help || !file) return usageError(this, values.help);
    const plan = await loadPlanOrReport(file);
    if (!plan) return 1;
    const dbPath = databaseTarget(
      values.db ?? process.env.NINEFOLD_DATABASE_URL ?? process.env.NINEFOLD_DB ?? `${plan.service.name}.db`,
    );
    const durability = (values.durability ?? process.env.NINEFOLD_DURABILITY ?? 'normal').toUpperCase();
    if (durability !== 'NORMAL' && durability !== 'FULL') return usageError(this, false);
    let store: Store;
    try {
      store = openStore(dbPath, { synchronous: durability });
    } catch (error) {
      if (!(error instanceof StoreError)) throw error;
      process.stderr.write(`ninefold serve: ${error.message}\n`);
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
          : `ninefold serve: cannot migrate the database ${shownTarget(dbPath)}: ${error.message}\n`,
      );
      return 1;
    }
    const app = await createServer(plan, { store, logLevel: values['log-level'] ?? process.env.LOG_LEVEL ?? 'info' });
    const port = Number(values.port ?? process.env.PORT ?? 3000);
    const host = values.host ?? process.env.HOST ?? '127.0.0.1';
    const address = await app.listen({ port, host });
    process.stdout.write(
      `${plan.service.title} is serving at ${address}\n  docs:     ${address}/docs\n  openapi:  ${address}/openapi.json\n  database: ${shownTarget(dbPath)}\n`,
    );
    return new Promise<number>((done) => {
      let stopping = false;
      const stop = async (signal: string) => {
        if (stopping) return;
        stopping = true;
        app.log.info({ signal }, 'shutting down: finishing in-flight requests');
        const outcome = await shutDown(app, store);
        if (outcome.line) app.log[outcome.code === 0 ? 'warn' : 'error']({ signal }, `shut down: ${outcome.line}`);
        done(outcome.code);
      };
      process.once('SIGTERM', () => void stop('SIGTERM'));
      process.once('SIGINT', () => void stop('SIGINT'));
    });
  },
};

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * Stops accepting, finishes in-flight requests, then closes the store. Exit 0 when everything acknowledged is on disk,
 * even if the store could not tidy up (a WAL not checkpointed, applied at the next start, on a full disk); 1 when it may not
 * be (the database file was deleted or replaced while serving) or closing failed. Never throws: what went wrong is
 * one line for the log, without a stack.
 */
const shutDown = async (
  app: { close(): PromiseLike<unknown> },
  store: Store,
): Promise<{ code: number; line?: string }> => {
  const problems: string[] = [];
  let failed = false;
  try {
    await app.close();
  } catch (error) {
    failed = true;
    problems.push(`closing the server: ${messageOf(error)}`);
  }
  try {
    const report = await store.close();
    failed ||= !report.intact;
    if (report.note) problems.push(report.note);
  } catch (error) {
    failed = true;
    problems.push(`closing the database: ${messageOf(error)}`);
  }
  if (problems.length === 0) return { code: failed ? 1 : 0 };
  return {
    code: failed ? 1 : 0,
    line: `${problems.join('; ')}${failed ? '' : '; everything acknowledged is on disk'}`,
  };
};
