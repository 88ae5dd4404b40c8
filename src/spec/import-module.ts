import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire, isBuiltin } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { BuildOptions, Message, Plugin } from 'esbuild';
import { importExternal } from '../runtime/import-external.ts';
import { type CompiledModule as Compiled, readCached, writeCached } from './module-cache.ts';

/**
 * Imports a user's TS/JS module. JavaScript is imported as it is. TypeScript is compiled by esbuild into one ES
 * module (the files it imports by relative path bundled in, packages left to Node), written to a private temporary
 * directory, imported from there and deleted. No loader hooks are registered: tsx's cost a worker thread (about
 * 34 MB) and slowed every later import. Stack traces point into the user's files (a source map, with Node's source
 * maps turned on, as tsx did); `import.meta.url`, `.filename` and `.dirname` name the module itself. A TypeScript
 * module is compiled and imported once per process (Node caches a JavaScript one the same way), and the compiled
 * code is kept on disk for the next start while its files are unchanged (module-cache.ts).
 */
export const importModule = async (absolute: string): Promise<Record<string, unknown>> => {
  if (!isTypeScript(absolute)) return importExternal(pathToFileURL(absolute).href);
  return once(imported, absolute, async () => importCompiled(await compileModule(absolute)));
};

/**
 * Starts compiling a TypeScript module without running it, so that esbuild (a process of its own) works while the
 * caller does something else; importModule then finds it compiled. A failure is reported by importModule.
 */
export const precompileModule = (absolute: string): void => {
  if (isTypeScript(absolute)) compileModule(absolute).catch(() => undefined);
};

const isTypeScript = (file: string) => /\.m?ts$/.test(file);

const imported = new Map<string, Promise<Record<string, unknown>>>();
const compiled = new Map<string, Promise<Compiled>>();

/** The promise of `key` in `cache`, made by `make` the first time; a failed one is forgotten (tried again). */
const once = <T>(cache: Map<string, Promise<T>>, key: string, make: () => Promise<T>): Promise<T> => {
  let pending = cache.get(key);
  if (!pending) {
    pending = make();
    cache.set(key, pending);
    pending.catch(() => cache.delete(key));
  }
  return pending;
};

/** A compile error of the user's module, with the file:line:col of its first problem. */
export class ModuleCompileError extends Error {
  override name = 'ModuleCompileError';
}

/** Builds in flight: esbuild's service process is stopped when the last one ends, not kept for the server's life. */
let building = 0;

const compileModule = (absolute: string): Promise<Compiled> =>
  once(compiled, absolute, async () => {
    const require = createRequire(import.meta.url);
    // Where the output would be written: source map paths are relative to it.
    const outdir = dirname(absolute);
    const options = {
      entryPoints: [absolute],
      outdir,
      write: false,
      bundle: true,
      format: 'esm',
      platform: 'node',
      target: `node${process.versions.node}`,
      sourcemap: 'external',
      sourcesContent: false,
      logLevel: 'silent',
      metafile: true,
      define: {
        'import.meta.url': JSON.stringify(pathToFileURL(absolute).href),
        'import.meta.filename': JSON.stringify(absolute),
        'import.meta.dirname': JSON.stringify(dirname(absolute)),
      },
    } satisfies BuildOptions;
    // esbuild's version from its package.json: loading esbuild itself is what a kept module saves.
    const esbuildMain = require.resolve('esbuild');
    const { version } = JSON.parse(readFileSync(join(dirname(esbuildMain), '../package.json'), 'utf8')) as {
      version: string;
    };
    const setting = JSON.stringify({ options, esbuild: version });
    const kept = readCached(absolute, setting);
    if (kept) return kept;
    // require, not import(): esbuild is CommonJS, and import() would first scan its 100 kB for export names.
    const esbuild = require(esbuildMain) as typeof import('esbuild');
    building++;
    const packages = { imported: false };
    const result = await esbuild
      .build({ ...options, plugins: [packagesFromTheirPlace(packages)] })
      .catch((error: { errors?: Message[] }) => {
        throw new ModuleCompileError(firstProblem(error.errors) ?? String(error));
      })
      .finally(() => {
        if (--building === 0) return esbuild.stop();
      });
    const code = result.outputFiles.find((f) => !f.path.endsWith('.map'))?.text ?? '';
    const map = JSON.parse(result.outputFiles.find((f) => f.path.endsWith('.map'))?.text ?? '{}') as {
      sources?: string[];
    };
    map.sources = (map.sources ?? []).map((source) => pathToFileURL(resolve(outdir, source)).href);
    const made = { code: code.replace(/\n\/\/# sourceMappingURL=.*\n?$/, '\n'), map: JSON.stringify(map) };
    // Metafile paths are relative to esbuild's working folder, the process's.
    const inputs = Object.keys(result.metafile.inputs).map((input) => resolve(input));
    if (!packages.imported) await writeCached(absolute, setting, inputs, made);
    return made;
  });

const importCompiled = async ({ code, map }: Compiled): Promise<Record<string, unknown>> => {
  const dir = await mkdtemp(join(tmpdir(), 'ninefold-ts-'));
  try {
    const file = join(dir, 'module.mjs');
    const inlineMap = `//# sourceMappingURL=data:application/json;base64,${Buffer.from(map).toString('base64')}\n`;
    await writeFile(file, `${code}${inlineMap}`, { mode: 0o600 });
    // Before the import: Node reads a module's source map as it loads it.
    process.setSourceMapsEnabled(true);
    return await importExternal(pathToFileURL(file).href);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
};

const firstProblem = (messages: Message[] | undefined): string | undefined => {
  const first = messages?.[0];
  if (!first) return undefined;
  const at = first.location ? `${first.location.file}:${first.location.line}:${first.location.column + 1}: ` : '';
  return `${at}${first.text}`;
};

/**
 * A package the module imports (`import { z } from 'zod'`) stays an import, of the file Node would load for it from
 * the module's own folder: the compiled copy lives elsewhere, so the import names that file by its URL.
 */
const packagesFromTheirPlace = (packages: { imported: boolean }): Plugin => ({
  name: 'packages-from-their-place',
  setup(build) {
    build.onResolve({ filter: /.*/ }, async (args) => {
      if (args.pluginData === RESOLVING || args.path.startsWith('.') || isAbsolute(args.path)) return undefined;
      if (isBuiltin(args.path)) return { path: args.path, external: true };
      const found = await build.resolve(args.path, {
        kind: args.kind,
        resolveDir: args.resolveDir,
        importer: args.importer,
        pluginData: RESOLVING,
      });
      if (found.errors.length > 0) return { errors: found.errors };
      packages.imported = true;
      return { path: pathToFileURL(found.path).href, external: true };
    });
  },
});

const RESOLVING = Symbol('resolving');
