import { asyncapiCommand } from './asyncapi.ts';
import { checkCommand } from './check.ts';
import type { Command } from './command.ts';
import { docsCommand } from './docs.ts';
import { initCommand } from './init.ts';
import { keysCommand } from './keys.ts';
import { openapiCommand } from './openapi.ts';
import { serveCommand } from './serve.ts';

const COMMANDS: Record<string, Command> = {
  asyncapi: asyncapiCommand,
  check: checkCommand,
  docs: docsCommand,
  init: initCommand,
  keys: keysCommand,
  openapi: openapiCommand,
  serve: serveCommand,
};

const help = () =>
  [
    'ninefold — one service interface specification, a running service.',
    '',
    'Usage:',
    ...Object.values(COMMANDS).map((c) => `  ${c.usage.padEnd(58)} ${c.summary}`),
    '',
    'Run `ninefold <command> --help` for a command’s options.',
  ].join('\n');

/** Runs the command line; returns the exit code. Errors are printed, never thrown. */
export const main = async (argv: string[]): Promise<number> => {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${help()}\n`);
    return name ? 0 : 2;
  }
  if (name === '--version' || name === '-v') {
    const { createRequire } = await import('node:module');
    process.stdout.write(`${createRequire(import.meta.url)('../../package.json').version}\n`);
    return 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    process.stderr.write(`ninefold: unknown command "${name}"\n\n${help()}\n`);
    return 2;
  }
  try {
    return await command.run(rest);
  } catch (error) {
    process.stderr.write(`ninefold ${name}: ${error instanceof Error ? error.message : String(error)}\n`);
    return 2;
  }
};
