import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createDrain, DEFAULT_GRACE_MS } from '../runtime/drain.ts';
import { createServer } from '../runtime/server.ts';
import { shutDown } from '../runtime/shutdown.ts';
import { SqliteStore, StoreError } from '../storage/index.ts';
import { type Command, HELP_OPTION, usageError } from './command.ts';
import { loadPlanOrReport } from './load-plan.ts';

export const serveCommand: Command = {
  summary: 'serve the spec as a running HTTP service (SQLite by default)',
  usage:
    'serve <spec> [--port N] [--host H] [--db PATH] [--allow-data-loss] [--durability normal|full] [--grace S] [--log-level L]',
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
        grace: { type: 'string' },
      },
      allowPositionals: true,
    });
    const [file] = positionals;
    if (values.help || !file) return usageError(this, values.help);
    const plan = await loadPlanOrReport(file);
    if (!plan) return 1;
    const dbPath = resolve(values.db ?? process.env.NINEFOLD_DB ?? `${plan.service.name}.db`);
    const durability = (values.durability ?? process.env.NINEFOLD_DURABILITY ?? 'normal').toUpperCase();
    if (durability !== 'NORMAL' && durability !== 'FULL') return usageError(this, false);
    let store: SqliteStore;
    try {
      store = new SqliteStore({ path: dbPath, synchronous: durability });
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
          : `ninefold serve: cannot migrate the database ${dbPath}: ${error.message}\n`,
      );
      return 1;
    }
    const grace = Number(values.grace ?? process.env.NINEFOLD_GRACE ?? DEFAULT_GRACE_MS / 1000);
    if (!(grace >= 0)) return usageError(this, false);
    const drain = createDrain(grace * 1000);
    const app = await createServer(plan, {
      store,
      drain,
      logLevel: values['log-level'] ?? process.env.LOG_LEVEL ?? 'info',
    });
    drain.watch(app.server);
    const port = Number(values.port ?? process.env.PORT ?? 3000);
    const host = values.host ?? process.env.HOST ?? '127.0.0.1';
    const address = await app.listen({ port, host });
    process.stdout.write(
      `${plan.service.title} is serving at ${address}\n  docs:     ${address}/docs\n  openapi:  ${address}/openapi.json\n  database: ${dbPath}\n`,
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
