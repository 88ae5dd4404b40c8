import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createServer } from '../runtime/server.ts';
import { SqliteStore, StoreError } from '../storage/index.ts';
import { type Command, HELP_OPTION, usageError } from './command.ts';
import { loadPlanOrReport } from './load-plan.ts';

export const serveCommand: Command = {
  summary: 'serve the spec as a running HTTP service (SQLite by default)',
  usage:
    'serve <spec> [--port N] [--host H] [--db PATH] [--allow-data-loss] [--durability normal|full] [--log-level L]',
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
    const dbPath = resolve(values.db ?? process.env.NINEFOLD_DB ?? `${plan.service.name}.db`);
    const durability = (values.durability ?? process.env.NINEFOLD_DURABILITY ?? 'normal').toUpperCase();
    if (durability !== 'NORMAL' && durability !== 'FULL') return usageError(this, false);
    const store = new SqliteStore({ path: dbPath, synchronous: durability });
    try {
      await store.migrate(plan, { allowDataLoss: values['allow-data-loss'] === true });
    } catch (error) {
      await store.close();
      if (error instanceof StoreError && error.kind === 'migration-refused') {
        process.stderr.write(`${error.message}\n`);
        return 1;
      }
      throw error;
    }
    const app = await createServer(plan, { store, logLevel: values['log-level'] ?? process.env.LOG_LEVEL ?? 'info' });
    const port = Number(values.port ?? process.env.PORT ?? 3000);
    const host = values.host ?? process.env.HOST ?? '127.0.0.1';
    const address = await app.listen({ port, host });
    process.stdout.write(
      `${plan.service.title} is serving at ${address}\n  docs:     ${address}/docs\n  openapi:  ${address}/openapi.json\n  database: ${dbPath}\n`,
    );
    return new Promise<number>((done) => {
      const stop = async (signal: string) => {
        app.log.info({ signal }, 'shutting down: finishing in-flight requests');
        await app.close();
        await store.close();
        done(0);
      };
      process.once('SIGTERM', () => void stop('SIGTERM'));
      process.once('SIGINT', () => void stop('SIGINT'));
    });
  },
};
