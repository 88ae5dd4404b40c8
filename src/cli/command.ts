export interface Command {
  readonly summary: string;
  readonly usage: string;
  run(args: string[]): Promise<number>;
}

/** The option every command takes. */
export const HELP_OPTION = { help: { type: 'boolean', short: 'h' } } as const;

export const usageError = (command: Command, help: boolean | undefined): number => {
  process.stdout.write(`Usage: ninefold ${command.usage}\n`);
  return help ? 0 : 2;
};
