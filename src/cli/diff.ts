import { type DiffSide, diffSpecs, type LocatedChange } from '../parts/versioning/diff/diff-specs.ts';
import { checkSource } from '../spec/check.ts';
import { loadSource } from '../spec/load.ts';
import { formatDiagnostic } from '../spec/reporter.ts';
import { type Command, HELP_OPTION, readArgs } from './command.ts';

const OPTIONS = {
  format: {
    type: 'string',
    value: 'F',
    choices: ['text', 'json'],
    default: 'text',
    description: 'how the changes are written',
  },
  ...HELP_OPTION,
} as const;

/** Loads and checks one spec; undefined (its problems printed) when it has errors. */
const side = async (file: string): Promise<DiffSide | undefined> => {
  const loaded = await loadSource(file);
  const { spec, diagnostics } = checkSource(loaded);
  if (spec) return { spec, source: loaded.source };
  for (const d of diagnostics) process.stderr.write(`${formatDiagnostic(d)}\n`);
  return undefined;
};

const line = (c: LocatedChange): string => {
  const where = c.line === undefined ? c.file : `${c.file}:${c.line}:${c.col}`;
  const cover = c.breaking
    ? c.coveredBy
      ? ` (covered by version ${c.coveredBy})`
      : ' — not covered by a new version'
    : '';
  return `${where}  ${c.breaking ? 'breaking' : 'safe    '}  ${c.rule}  ${c.message}${cover}`;
};

export const diffCommand: Command<typeof OPTIONS> = {
  name: 'diff',
  summary: 'list every change between two specs, breaking or safe, with file:line:col',
  args: '<old-spec> <new-spec>',
  options: OPTIONS,
  notes: [
    'A breaking change is covered when a version the old spec does not have declares it in its changes',
    '(rename, add, remove, retype). Rules: docs/versioning.md.',
    'Here exit code 1 means a breaking change is not covered; a spec that does not load or has errors exits 2.',
  ],
  async run(args) {
    const read = readArgs(this, args, { min: 2, max: 2 });
    if (typeof read === 'number') return read;
    const [oldFile = '', newFile = ''] = read.positionals;
    const [before, after] = [await side(oldFile), await side(newFile)];
    if (!before || !after) {
      process.stderr.write(`ninefold diff: ${!before ? oldFile : newFile} has errors; nothing compared\n`);
      return 2;
    }
    const changes = diffSpecs(before, after);
    const breaking = changes.filter((c) => c.breaking);
    const uncovered = breaking.filter((c) => !c.coveredBy);
    if (read.values.format === 'json') {
      const summary = {
        breaking: breaking.length,
        uncovered: uncovered.length,
        safe: changes.length - breaking.length,
      };
      process.stdout.write(`${JSON.stringify({ old: oldFile, new: newFile, ...summary, changes }, null, 2)}\n`);
    } else {
      for (const c of changes) process.stdout.write(`${line(c)}\n`);
      process.stdout.write(
        changes.length
          ? `${changes.length} change(s): ${breaking.length} breaking (${uncovered.length} not covered by a new version), ${changes.length - breaking.length} safe\n`
          : 'no changes\n',
      );
    }
    return uncovered.length ? 1 : 0;
  },
};
