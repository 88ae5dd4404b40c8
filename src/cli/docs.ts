import { writeFile } from 'node:fs/promises';
import { DOC_FORMATS, type DocFormat, renderDocs } from '../emit/index.ts';
import { type Command, HELP_OPTION, readArgs } from './command.ts';
import { loadPlanOrReport } from './load-plan.ts';

const OPTIONS = {
  format: {
    type: 'string',
    value: 'F',
    choices: DOC_FORMATS,
    default: 'md',
    description: 'Markdown or a self-contained HTML page',
  },
  out: { type: 'string', value: 'FILE', defaultText: 'stdout', description: 'write the document to this file' },
  ...HELP_OPTION,
} as const;

export const docsCommand: Command<typeof OPTIONS> = {
  name: 'docs',
  summary: 'render the nine-part document (Markdown or HTML)',
  args: '<spec>',
  options: OPTIONS,
  async run(args) {
    const read = readArgs(this, args, { min: 1, max: 1 });
    if (typeof read === 'number') return read;
    const { values } = read;
    const plan = await loadPlanOrReport(read.positionals[0] ?? '');
    if (!plan) return 1;
    const text = renderDocs(plan, values.format as DocFormat);
    if (values.out) await writeFile(values.out, text);
    else process.stdout.write(text);
    return 0;
  },
};
