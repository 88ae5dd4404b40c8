import { mkdir, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Command, HELP_OPTION, readArgs } from './command.ts';
import { initTemplate } from './init-template.ts';

export const SCHEMA_URL = 'https://ninefold.dev/schema/ninefold.schema.json';
const SPEC_FILE = 'service.yaml';
const SERVICE_NAME = /^[a-z][a-z0-9-]*$/;

/** The package's own copy of the JSON Schema (src/cli or dist/cli → package root). */
const packagedSchema = (): string =>
  resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'schema', 'ninefold.schema.json');

/**
 * Where the editor hint points. When Ninefold is installed in a project (inside node_modules), the
 * hint is a relative path to that installed copy: it works offline and always matches the installed
 * version. Otherwise (a source checkout, a global or npx run) a path would break when either moves,
 * so the hint is the schema's published https id.
 */
export const schemaHint = (specDir: string, schemaFile = packagedSchema()): string => {
  if (!schemaFile.split(sep).includes('node_modules')) return SCHEMA_URL;
  const path = relative(resolve(specDir), schemaFile).split(sep).join('/');
  return path.startsWith('.') ? path : `./${path}`;
};

/** A service name from the directory name (lower-case, kebab-case), or `my-service`. */
export const serviceName = (dir: string): string => {
  const name = basename(resolve(dir))
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^[^a-z]+|-+$/g, '');
  return SERVICE_NAME.test(name) ? name : 'my-service';
};

export const initCommand: Command<typeof HELP_OPTION> = {
  name: 'init',
  summary: 'write a small, commented, valid service.yaml to start from',
  args: '[dir]',
  options: HELP_OPTION,
  notes: [
    'Writes <dir>/service.yaml (dir defaults to the current folder, and is created when missing).',
    'An existing service.yaml is never overwritten: init exits 1 and leaves it as it is.',
  ],
  async run(args) {
    const read = readArgs(this, args, { min: 0, max: 1 });
    if (typeof read === 'number') return read;
    const dir = read.positionals[0] ?? '.';
    const file = join(dir, SPEC_FILE);
    await mkdir(dir, { recursive: true });
    try {
      // `wx` fails if the file exists, in one step: an existing spec is never overwritten.
      await writeFile(file, initTemplate(serviceName(dir), schemaHint(dir)), { flag: 'wx' });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      process.stderr.write(`ninefold init: ${file} already exists; it was left as it is.\n`);
      return 1;
    }
    const shown = /^[\w./-]+$/.test(file) ? file : `'${file.replaceAll("'", "'\\''")}'`;
    process.stdout.write(
      [
        `Wrote ${file}`,
        '',
        'Next:',
        `  npx ninefold check ${shown}    every problem at once, with file:line:col`,
        `  npx ninefold docs ${shown}     the nine-part document`,
        `  npx ninefold serve ${shown}    run it on SQLite at http://127.0.0.1:3000`,
        '',
      ].join('\n'),
    );
    return 0;
  },
};
