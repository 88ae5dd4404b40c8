import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { DOC_FORMATS, type DocFormat, renderDocs } from '../emit/index.ts';
import { type Command, HELP_OPTION, usageError } from './command.ts';
import { loadPlanOrReport } from './load-plan.ts';

const isFormat = (value: string): value is DocFormat => (DOC_FORMATS as readonly string[]).includes(value);

export const docsCommand: Command = {
  summary: 'render the nine-part document (Markdown or HTML)',
  usage: 'docs <spec> [--format md|html] [--out file]',
  async run(args) {
    const { values, positionals } = parseArgs({
      args,
      options: { ...HELP_OPTION, format: { type: 'string', default: 'md' }, out: { type: 'string' } },
      allowPositionals: true,
    });
    const [file] = positionals;
    if (values.help || !file) return usageError(this, values.help);
    if (!isFormat(values.format)) {
      process.stderr.write(`ninefold docs: --format must be one of ${DOC_FORMATS.join(', ')}\n`);
      return 2;
    }
    const plan = await loadPlanOrReport(file);
    if (!plan) return 1;
    const text = renderDocs(plan, values.format);
    if (values.out) await writeFile(values.out, text);
    else process.stdout.write(text);
    return 0;
  },
};
