import { createRequire } from 'node:module';
import { closest } from '../spec/closest.ts';
import { type Command, usageLine } from './command.ts';

/**
 * The commands, each loaded when it runs: `serve` does not load the emitters, `check` does not load the server,
 * and `ninefold --help` is the only line that loads them all.
 */
const COMMANDS: Record<string, () => Promise<Command>> = {
  serve: async () => (await import('./serve.ts')).serveCommand,
  check: async () => (await import('./check.ts')).checkCommand,
  init: async () => (await import('./init.ts')).initCommand,
  docs: async () => (await import('./docs.ts')).docsCommand,
  openapi: async () => (await import('./openapi.ts')).openapiCommand,
  asyncapi: async () => (await import('./asyncapi.ts')).asyncapiCommand,
  keys: async () => (await import('./keys.ts')).keysCommand,
  diff: async () => (await import('./diff.ts')).diffCommand,
};

const help = async () => {
  const commands = await Promise.all(Object.values(COMMANDS).map((load) => load()));
  const lines = commands.map((c) => [usageLine(c).replace(/^ninefold /, ''), c.summary] as const);
  const width = Math.max(...lines.map(([usage]) => usage.length));
  return [
    'ninefold — one service interface specification, a running service.',
    '',
    'Usage:',
    ...lines.map(([usage, summary]) => `  ${usage.padEnd(width)}  ${summary}`),
    '',
    'Run `ninefold <command> --help` for its options, their defaults and environment variables.',
    'Exit codes: 0 done; 1 the work failed; 2 the command line was wrong.',
  ].join('\n');
};

/** Runs the command line; returns the exit code. Errors are printed, never thrown. */
export const main = async (argv: string[]): Promise<number> => {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${await help()}\n`);
    return name ? 0 : 2;
  }
  if (name === '--version' || name === '-v') {
    process.stdout.write(`${createRequire(import.meta.url)('../../package.json').version}\n`);
    return 0;
  }
  const load = COMMANDS[name];
  if (!load) {
    const near = closest(name, Object.keys(COMMANDS));
    process.stderr.write(
      `ninefold: unknown command "${name}"${near ? `; did you mean "${near}"?` : ''} (ninefold --help lists them)\n`,
    );
    return 2;
  }
  try {
    return await (await load()).run(rest);
  } catch (error) {
    process.stderr.write(`ninefold ${name}: ${error instanceof Error ? error.message : String(error)}\n`);
    return 2;
  }
};
