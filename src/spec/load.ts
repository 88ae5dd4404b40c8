import { readFile, stat } from 'node:fs/promises';
import { extname, resolve } from 'node:path';
import type { Diagnostic } from './diagnostic-codes.ts';
import { fastParseYaml } from './fast-yaml.ts';
import { importModule } from './import-module.ts';
import { Reporter } from './reporter.ts';
import { SourceMap, yamlPackage } from './source-map.ts';

export const MAX_SPEC_BYTES = 1024 * 1024;
/** Far above what a hand-written spec needs, far below what an alias bomb expands to. */
const MAX_ALIAS_COUNT = 200;

export interface LoadedSource {
  /** The raw, unchecked spec (undefined when loading failed). */
  readonly raw: unknown;
  readonly source: SourceMap;
  readonly diagnostics: Diagnostic[];
  /** Directory the spec lives in: handler modules are resolved from here. */
  readonly dir: string;
}

const YAML_EXT = new Set(['.yaml', '.yml', '.json']);
const MODULE_EXT = new Set(['.ts', '.mts', '.js', '.mjs']);

/** Parses YAML or JSON text; positions are kept so diagnostics can point into the file. */
export const parseSpecText = (
  text: string,
  file: string,
): { raw: unknown; source: SourceMap; diagnostics: Diagnostic[] } => {
  // Most specs: js-yaml reads them, and `yaml` is loaded only if a diagnostic needs a position.
  const quick = fastParseYaml(text);
  if (quick !== undefined) return { raw: quick, source: SourceMap.fromYamlText(file, text), diagnostics: [] };
  const { LineCounter, parseDocument } = yamlPackage();
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false });
  const source = SourceMap.fromYaml(file, doc.contents, lines, text);
  const reporter = new Reporter(source);
  // The first syntax error is the real one; the ones after it are usually its echoes.
  for (const error of doc.errors.slice(0, 1)) {
    const pos = source.positionOfOffset(error.pos[0]);
    const duplicate = error.code === 'DUPLICATE_KEY';
    reporter.diagnostics.push({
      code: duplicate ? 'duplicate-key' : 'yaml-syntax',
      severity: 'error',
      message: duplicate ? 'this key appears twice in the same mapping' : firstLine(error.message),
      file,
      pointer: '',
      ...(pos ?? {}),
    });
  }
  if (reporter.diagnostics.length > 0) return { raw: undefined, source, diagnostics: reporter.diagnostics };
  try {
    return { raw: doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT }), source, diagnostics: [] };
  } catch {
    reporter.report(
      'yaml-alias-bomb',
      '',
      `the document expands more than ${MAX_ALIAS_COUNT} aliases; refused as a resource-exhaustion attack`,
    );
    return { raw: undefined, source, diagnostics: reporter.diagnostics };
  }
};

const firstLine = (message: string) => message.split('\n')[0]?.replace(/ at line \d+, column \d+.*$/, '') ?? message;

/** Loads a spec file: YAML, JSON, or a TS/JS module exporting `defineService({...})`. Never throws. */
export const loadSource = async (path: string): Promise<LoadedSource> => {
  const file = path;
  const absolute = resolve(path);
  const dir = resolve(absolute, '..');
  const fail = (code: Diagnostic['code'], message: string): LoadedSource => ({
    raw: undefined,
    source: new SourceMap(file),
    dir,
    diagnostics: [{ code, severity: 'error', message, file, pointer: '' }],
  });
  const ext = extname(path).toLowerCase();
  if (!YAML_EXT.has(ext) && !MODULE_EXT.has(ext)) {
    return fail(
      'unsupported-file-type',
      `"${ext || path}" is not a spec file type (.yaml, .yml, .json, .ts, .mts, .js, .mjs)`,
    );
  }
  let size: number;
  try {
    const info = await stat(absolute);
    if (!info.isFile()) return fail('file-not-found', 'this path is not a file');
    size = info.size;
  } catch {
    return fail('file-not-found', 'no such file');
  }
  if (size > MAX_SPEC_BYTES) return fail('spec-too-large', `the file is ${size} bytes; specs are limited to 1 MiB`);

  if (MODULE_EXT.has(ext)) return loadModule(absolute, file, dir, fail);
  const text = await readFile(absolute, 'utf8');
  return { ...parseSpecText(text, file), dir };
};

const loadModule = async (
  absolute: string,
  file: string,
  dir: string,
  fail: (code: Diagnostic['code'], message: string) => LoadedSource,
): Promise<LoadedSource> => {
  try {
    const mod = await importModule(absolute);
    const raw = pickSpec(mod);
    if (raw === undefined)
      return fail('module-load-failed', 'the module exports no spec (export default defineService({...}))');
    const text = await readFile(absolute, 'utf8').catch(() => undefined);
    const source = text === undefined ? new SourceMap(file) : SourceMap.fromModuleText(file, text);
    return { raw, source, diagnostics: [], dir };
  } catch (error) {
    const message = error instanceof Error ? firstLine(error.message) : 'unknown error';
    return fail('module-load-failed', `the module failed to load: ${message}`);
  }
};

const pickSpec = (mod: Record<string, unknown>): unknown => {
  const isSpec = (v: unknown) => typeof v === 'object' && v !== null && 'ninefold' in v;
  if (isSpec(mod.default)) return mod.default;
  if (isSpec(mod.spec)) return mod.spec;
  return Object.values(mod).find(isSpec);
};
