import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import type { Plan } from '../plan/types.ts';
import { type Command, HELP_OPTION, usageError } from './command.ts';
import { loadPlanOrReport } from './load-plan.ts';

const FORMATS = ['json', 'yaml'] as const;

/** A command that writes one document of a spec (OpenAPI, AsyncAPI) as JSON or YAML, to stdout or --out. */
export const documentCommand = (
  name: string,
  summary: string,
  build: (plan: Plan) => Record<string, unknown>,
): Command => ({
  summary,
  usage: `${name} <spec> [--out file] [--format json|yaml]`,
  async run(args) {
    const { values, positionals } = parseArgs({
      args,
      options: { ...HELP_OPTION, format: { type: 'string' }, out: { type: 'string' } },
      allowPositionals: true,
    });
    const [file] = positionals;
    if (values.help || !file) return usageError(this, values.help);
    const format = values.format ?? (/\.ya?ml$/i.test(values.out ?? '') ? 'yaml' : 'json');
    if (!(FORMATS as readonly string[]).includes(format)) {
      process.stderr.write(`ninefold ${name}: --format must be one of ${FORMATS.join(', ')}\n`);
      return 2;
    }
    const plan = await loadPlanOrReport(file);
    if (!plan) return 1;
    const document = build(plan);
    const text =
      format === 'yaml'
        ? stringify(document, { aliasDuplicateObjects: false })
        : `${JSON.stringify(document, null, 2)}\n`;
    if (values.out) await writeFile(values.out, text);
    else process.stdout.write(text);
    return 0;
  },
});
