import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { buildOpenApi } from '../emit/openapi.ts';
import { type Command, HELP_OPTION, usageError } from './command.ts';
import { loadPlanOrReport } from './load-plan.ts';

const FORMATS = ['json', 'yaml'] as const;

export const openapiCommand: Command = {
  summary: 'write the OpenAPI 3.1 document (JSON or YAML)',
  usage: 'openapi <spec> [--out file] [--format json|yaml]',
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
      process.stderr.write(`ninefold openapi: --format must be one of ${FORMATS.join(', ')}\n`);
      return 2;
    }
    const plan = await loadPlanOrReport(file);
    if (!plan) return 1;
    const document = buildOpenApi(plan);
    const text =
      format === 'yaml'
        ? stringify(document, { aliasDuplicateObjects: false })
        : `${JSON.stringify(document, null, 2)}\n`;
    if (values.out) await writeFile(values.out, text);
    else process.stdout.write(text);
    return 0;
  },
};
