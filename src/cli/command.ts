import { parseArgs } from 'node:util';
import { closest } from '../spec/closest.ts';

/** One option of a command, as parseArgs reads it and as `--help` describes it. */
export interface OptionSpec {
  readonly type: 'string' | 'boolean';
  readonly short?: string;
  readonly multiple?: boolean;
  /** What the value is, in the help (`N`, `PATH`). */
  readonly value?: string;
  /** The only values accepted; anything else is refused with this list. */
  readonly choices?: readonly string[];
  /** The environment variables read, first set first, when the option is not given. */
  readonly env?: string | readonly string[];
  /** The value used when neither the option nor its environment variable is given. */
  readonly default?: string;
  /** The default as the help tells it, when it depends on the spec (`<service name>.db`). */
  readonly defaultText?: string;
  readonly description: string;
}

export type OptionSpecs = Readonly<Record<string, OptionSpec>>;

export interface Command<O extends OptionSpecs = OptionSpecs> {
  /** The words that run it: `serve`, `keys create`. */
  readonly name: string;
  readonly summary: string;
  /** The positional arguments, as the usage line shows them: `<spec>`, `[dir]`. */
  readonly args: string;
  readonly options: O;
  /** Lines after the options: what the command reads, what its exit codes mean. */
  readonly notes?: readonly string[];
  run(args: string[]): Promise<number>;
}

/** The values read for a command's options: a string, a boolean, or the strings of a repeated option. */
export type OptionValues<O extends OptionSpecs> = {
  -readonly [K in keyof O]?: O[K]['type'] extends 'boolean'
    ? boolean
    : O[K]['multiple'] extends true
      ? string[]
      : string;
};

/** The option every command takes. */
export const HELP_OPTION = {
  help: { type: 'boolean', short: 'h', description: 'show this help and exit' },
} as const satisfies OptionSpecs;

/** The exit codes every command shares; `--help` lists them. */
export const EXIT_CODES = [
  'Exit codes: 0 done; 1 the work failed (a spec with errors, a refused migration, a port in use);',
  '            2 the command line was wrong (an unknown option, a bad value, a missing argument).',
];

export const usageLine = (command: Command<OptionSpecs>): string => {
  const flags = Object.keys(command.options).length > 1 ? ' [options]' : '';
  return `ninefold ${command.name}${command.args ? ` ${command.args}` : ''}${flags}`;
};

const optionLabel = (name: string, spec: OptionSpec): string =>
  `${spec.short ? `-${spec.short}, ` : '    '}--${name}${spec.type === 'string' ? ` ${spec.value ?? 'VALUE'}` : ''}`;

const envNames = (spec: OptionSpec): readonly string[] =>
  spec.env === undefined ? [] : typeof spec.env === 'string' ? [spec.env] : spec.env;

const optionDetails = (spec: OptionSpec): string => {
  const details = [
    spec.choices ? `one of ${spec.choices.join(', ')}` : undefined,
    spec.multiple ? 'may be repeated' : undefined,
    spec.default !== undefined || spec.defaultText ? `default ${spec.defaultText ?? spec.default}` : undefined,
    spec.env ? `env ${envNames(spec).join(', then ')}` : undefined,
  ].filter((d) => d !== undefined);
  return details.length ? ` (${details.join('; ')})` : '';
};

/** `ninefold <command> --help`: the usage, every option with its default and environment variable, exit codes. */
export const helpText = (command: Command<OptionSpecs>): string => {
  const rows = Object.entries(command.options).map(([name, spec]) => [optionLabel(name, spec), spec] as const);
  const width = Math.max(...rows.map(([label]) => label.length));
  // A row longer than a terminal's 100 columns puts its details (choices, default, env) on a line of their own.
  const options = rows.map(([label, spec]) => {
    const row = `  ${label.padEnd(width)}  ${spec.description}`;
    const details = optionDetails(spec);
    if (!details || row.length + details.length <= 100) return `${row}${details}`;
    return `${row}\n${' '.repeat(width + 4)}${details.trim()}`;
  });
  return [
    `Usage: ${usageLine(command)}`,
    '',
    `${command.summary[0]?.toUpperCase()}${command.summary.slice(1)}.`,
    '',
    'Options:',
    ...options,
    ...(command.notes?.length ? ['', ...command.notes] : []),
    '',
    ...EXIT_CODES,
    '',
  ].join('\n');
};

/** A wrong command line: one line on stderr saying what is wrong, and where the help is. Exit code 2. */
export const usageError = (command: Command<OptionSpecs>, message: string): number => {
  process.stderr.write(`ninefold ${command.name}: ${message} (ninefold ${command.name} --help)\n`);
  return 2;
};

const describeParseError = (command: Command<OptionSpecs>, error: unknown): string => {
  const code = (error as { code?: string }).code;
  const message = error instanceof Error ? error.message : String(error);
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const given = /'(-{1,2}[^'\s]+)'/.exec(message)?.[1] ?? 'option';
    const name = given.replace(/^-+/, '').split('=')[0] ?? '';
    const known = Object.keys(command.options);
    const nearest = closest(name, known);
    return `unknown option ${given}${nearest ? `; did you mean --${nearest}?` : `; options are --${known.join(', --')}`}`;
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const given = /'(-{1,2}[^'\s]+)/.exec(message)?.[1] ?? 'an option';
    const option = Object.entries(command.options).find(([n, s]) => given === `--${n}` || given === `-${s.short}`);
    if (option?.[1].type === 'string') {
      const dash = message.includes('ambiguous') ? `; write --${option[0]}=VALUE for a value that starts with "-"` : '';
      return `--${option[0]} needs a value (${option[1].value ?? 'VALUE'})${dash}`;
    }
    return `--${option?.[0] ?? given.replace(/^-+/, '')} takes no value`;
  }
  return message.split('\n')[0] ?? message;
};

/**
 * Reads a command line against the command's options: unknown options get the nearest known name, a missing option
 * takes its environment variable and then its default, values outside `choices` are refused with the allowed ones,
 * `--help` prints the help. Either the values and positionals, or the exit code to return at once (0 after --help,
 * 2 for a wrong command line).
 */
export const readArgs = <O extends OptionSpecs>(
  command: Command<O>,
  args: string[],
  positionals: { min: number; max: number },
): { values: OptionValues<O>; positionals: string[] } | number => {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    const options = Object.fromEntries(
      Object.entries(command.options).map(([name, spec]) => [
        name,
        { type: spec.type, ...(spec.short ? { short: spec.short } : {}), ...(spec.multiple ? { multiple: true } : {}) },
      ]),
    );
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    return usageError(command, describeParseError(command, error));
  }
  const values = parsed.values as Record<string, string | boolean | string[] | undefined>;
  if (values.help) {
    process.stdout.write(helpText(command));
    return 0;
  }
  for (const [name, spec] of Object.entries(command.options)) {
    // An empty variable counts as unset, as shells leave `NINEFOLD_DB=` in scripts.
    values[name] ??=
      envNames(spec).reduce<string | undefined>((v, env) => v ?? (process.env[env] || undefined), undefined) ??
      spec.default;
    const value = values[name];
    if (spec.choices && typeof value === 'string' && !spec.choices.includes(value)) {
      return usageError(command, `--${name} must be one of ${spec.choices.join(', ')} (got "${value}")`);
    }
  }
  const count = parsed.positionals.length;
  if (count < positionals.min) return usageError(command, `missing ${command.args}`);
  if (count > positionals.max) {
    return usageError(command, `unexpected argument "${parsed.positionals[positionals.max]}"`);
  }
  return { values: values as OptionValues<O>, positionals: parsed.positionals };
};
