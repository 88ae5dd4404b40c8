import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/**
 * A compiled TypeScript module kept on disk between starts, so that `ninefold serve` does not start esbuild (its
 * API and a process of its own) when nothing changed. An entry lives in `node_modules/.cache/ninefold/modules/`, in
 * the nearest `node_modules` folder above the module (none: no cache); its name is a hash of the module's path and
 * of everything the compile depends on besides the files (the compile options, esbuild's and Node's versions).
 * The entry lists every file esbuild bundled, with a hash of its bytes, and every file that could change how they
 * compile (tsconfig.json, jsconfig.json and package.json in each folder above them, or their absence): it is used
 * only when all of them are as they were, and one that cannot be read or parsed is not used. A module that imports
 * a package, or whose tsconfig.json or jsconfig.json `extends` another, is not kept (which file a package name means is not checked).
 */
export interface CompiledModule {
  readonly code: string;
  /** The source map, its sources made absolute: the code is imported from elsewhere. */
  readonly map: string;
}

interface Entry extends CompiledModule {
  readonly key: string;
  /** Absolute path → sha256 of its bytes, or null for a file that must not exist. */
  readonly files: Record<string, string | null>;
}

const CONFIG_FILES = ['tsconfig.json', 'jsconfig.json', 'package.json'];

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

/** The file's hash, or null when there is no such file. */
const hashOf = (file: string): string | null => {
  try {
    return sha256(readFileSync(file));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
};

/** Where the module's entries live: `.cache/ninefold/modules` in the nearest node_modules above it. */
const cacheDir = (absolute: string): string | undefined => {
  for (let dir = dirname(absolute); ; dir = dirname(dir)) {
    const modules = join(dir, 'node_modules');
    if (existsSync(modules)) return join(modules, '.cache/ninefold/modules');
    if (dirname(dir) === dir) return undefined;
  }
};

/**
 * The entry's key: the module's path and what the compile depends on besides the files (`setting`: the compile
 * options and the compiler's version).
 */
const keyOf = (absolute: string, setting: string) =>
  sha256(JSON.stringify({ format: 1, node: process.version, absolute, setting }));

/** The compiled module kept for `absolute`, when every file it was compiled from is unchanged. */
export const readCached = (absolute: string, setting: string): CompiledModule | undefined => {
  const dir = cacheDir(absolute);
  if (!dir) return undefined;
  const key = keyOf(absolute, setting);
  try {
    const entry = JSON.parse(readFileSync(join(dir, `${key}.json`), 'utf8')) as Entry;
    if (entry.key !== key || typeof entry.code !== 'string' || typeof entry.map !== 'string') return undefined;
    const files = Object.entries(entry.files);
    if (files.length === 0) return undefined;
    for (const [file, hash] of files) if (hashOf(file) !== hash) return undefined;
    return { code: entry.code, map: entry.map };
  } catch {
    // Missing, unreadable or not an entry: compiled again (and written over).
    return undefined;
  }
};

/**
 * Keeps the module compiled from `inputs` (the absolute paths esbuild read). Best effort: a folder that cannot be
 * written only means the next start compiles again.
 */
export const writeCached = async (
  absolute: string,
  setting: string,
  inputs: readonly string[],
  compiled: CompiledModule,
): Promise<void> => {
  const dir = cacheDir(absolute);
  if (!dir || !inputs.includes(absolute)) return;
  const files: Record<string, string | null> = {};
  try {
    for (const input of inputs) {
      files[input] = hashOf(input);
      if (files[input] === null) return;
      for (let folder = dirname(input); !(join(folder, CONFIG_FILES[0] as string) in files); folder = dirname(folder)) {
        for (const name of CONFIG_FILES) {
          const file = join(folder, name);
          files[file] = hashOf(file);
          if (name !== 'package.json' && files[file] !== null && /"extends"/.test(readFileSync(file, 'utf8'))) return;
        }
        if (dirname(folder) === folder) break;
      }
    }
  } catch {
    return;
  }
  const key = keyOf(absolute, setting);
  const entry: Entry = { key, files, ...compiled };
  const file = join(dir, `${key}.json`);
  const partial = `${file}.${process.pid}.tmp`;
  try {
    await mkdir(dir, { recursive: true });
    await writeFile(partial, JSON.stringify(entry));
    // A reader sees the old entry or the whole new one, never half of one.
    await rename(partial, file);
  } catch {
    await rm(partial, { force: true }).catch(() => undefined);
  }
};
