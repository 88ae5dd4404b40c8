import { writeFile } from 'node:fs/promises';
import { stringify } from 'yaml';
import type { Plan } from '../plan/types.ts';
import { type Command, HELP_OPTION, type OptionSpecs, readArgs, usageError } from './command.ts';
import { loadPlanOrReport } from './load-plan.ts';

const OPTIONS = {
  out: { type: 'string', value: 'FILE', defaultText: 'stdout', description: 'write the document to this file' },
  format: {
    type: 'string',
    value: 'F',
    choices: ['json', 'yaml'],
    defaultText: 'yaml when --out ends in .yaml or .yml, else json',
    description: 'JSON or YAML',
  },
  ...HELP_OPTION,
} as const satisfies OptionSpecs;

const VERSIONED = {
  ...OPTIONS,
  'api-version': {
    type: 'string',
    value: 'V',
    defaultText: 'the newest',
    description: 'the declared API version whose shapes the document shows',
  },
} as const satisfies OptionSpecs;

/** Builds one document of a plan, in the shapes of one API version (undefined: the newest). */
export type BuildDocument = (plan: Plan, version?: string) => Record<string, unknown>;

/**
 * A command that writes one document of a spec (OpenAPI, AsyncAPI) as JSON or YAML, to stdout or --out. The
 * emitter is loaded when the command runs, so that the command line starts without it.
 */
export const documentCommand = (
  name: string,
  summary: string,
  loadBuild: () => Promise<BuildDocument>,
  versioned = false,
): Command<OptionSpecs> => ({
  name,
  summary,
  args: '<spec>',
  options: versioned ? VERSIONED : OPTIONS,
  async run(args) {
    const read = readArgs(this as Command<typeof VERSIONED>, args, { min: 1, max: 1 });
    if (typeof read === 'number') return read;
    const { values } = read;
    const format = values.format ?? (/\.ya?ml$/i.test(values.out ?? '') ? 'yaml' : 'json');
    const plan = await loadPlanOrReport(read.positionals[0] ?? '');
    if (!plan) return 1;
    const version = values['api-version'];
    const ids = plan.versioning?.ids ?? [];
    if (version !== undefined && !ids.includes(version))
      return usageError(
        this,
        ids.length
          ? `--api-version must be a declared version: ${ids.join(', ')} (got "${version}")`
          : '--api-version: the spec declares no versioning',
      );
    const document = (await loadBuild())(plan, version);
    const text =
      format === 'yaml'
        ? stringify(document, { aliasDuplicateObjects: false })
        : `${JSON.stringify(document, null, 2)}\n`;
    if (values.out) await writeFile(values.out, text);
    else process.stdout.write(text);
    return 0;
  },
});
