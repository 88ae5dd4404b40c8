import { buildPlan } from '../plan/build-plan.ts';
import { checkFile } from '../spec/check.ts';
import { formatDiagnostic } from '../spec/reporter.ts';
import { accessReport } from './access-report.ts';
import { type Command, HELP_OPTION, readArgs } from './command.ts';

const OPTIONS = {
  format: {
    type: 'string',
    value: 'F',
    choices: ['text', 'json'],
    default: 'text',
    description: 'how the problems are written',
  },
  access: { type: 'boolean', description: 'also print what each role may do with each resource' },
  ...HELP_OPTION,
} as const;

export const checkCommand: Command<typeof OPTIONS> = {
  name: 'check',
  summary: 'report every problem in a spec, with file:line:col',
  args: '<spec>',
  options: OPTIONS,
  notes: ['Exit code 1 when the spec has errors (warnings alone exit 0).'],
  async run(args) {
    const read = readArgs(this, args, { min: 1, max: 1 });
    if (typeof read === 'number') return read;
    const { values } = read;
    const file = read.positionals[0] ?? '';
    const { diagnostics, spec, dir } = await checkFile(file);
    const errors = diagnostics.filter((d) => d.severity === 'error').length;
    if (values.format === 'json') {
      process.stdout.write(
        `${JSON.stringify({ file, errors, warnings: diagnostics.length - errors, diagnostics }, null, 2)}\n`,
      );
    } else {
      for (const d of diagnostics) process.stdout.write(`${formatDiagnostic(d)}\n`);
      const warnings = diagnostics.length - errors;
      process.stdout.write(
        errors || warnings ? `${errors} error(s), ${warnings} warning(s)\n` : `${file}: no problems found\n`,
      );
      // What each role may do, rules and their defaults applied (deny by default): see docs/auth.md.
      if (values.access && spec) process.stdout.write(`\n${accessReport(buildPlan(spec, dir))}`);
    }
    return errors > 0 ? 1 : 0;
  },
};
