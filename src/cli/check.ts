import { parseArgs } from 'node:util';
import { buildPlan } from '../plan/build-plan.ts';
import { checkFile } from '../spec/check.ts';
import { formatDiagnostic } from '../spec/reporter.ts';
import { accessReport } from './access-report.ts';
import { type Command, HELP_OPTION, usageError } from './command.ts';

export const checkCommand: Command = {
  summary: 'report every problem in a spec, with file:line:col',
  usage: 'check <spec> [--format text|json] [--access]',
  async run(args) {
    const { values, positionals } = parseArgs({
      args,
      options: {
        ...HELP_OPTION,
        format: { type: 'string', default: 'text' },
        access: { type: 'boolean', default: false },
      },
      allowPositionals: true,
    });
    const [file] = positionals;
    if (values.help || !file) return usageError(this, values.help);
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
