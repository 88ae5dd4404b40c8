#!/usr/bin/env node
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';

const built = (path) => statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? -1;
const BUNDLE = fileURLToPath(new URL('../dist/cli-bundle/ninefold.cjs', import.meta.url));
const CACHE = `${BUNDLE}.cache`;
const TSC_MAIN = new URL('../dist/cli/main.js', import.meta.url);

/**
 * The bundle `npm run build` makes (scripts/bundle-cli.mjs), compiled with the code cache written with it: V8 then
 * takes the compiled functions from the cache instead of parsing and compiling them again. The file is the body of a
 * CommonJS-style wrapper; a cache older than the bundle, or one V8 rejects (another Node version), is not used.
 */
const loadBundle = () => {
  const cachedData = built(CACHE) >= built(BUNDLE) ? readFileSync(CACHE) : undefined;
  const script = new Script(
    `(function (exports, require, module, __filename, __dirname, __ninefoldImport) {${readFileSync(BUNDLE, 'latin1')}\n})`,
    { filename: BUNDLE, ...(cachedData ? { cachedData } : {}) },
  );
  const writeCache = process.env.NINEFOLD_WRITE_CODE_CACHE;
  if (writeCache) process.once('exit', () => writeFileSync(writeCache, script.createCachedData()));
  const module = { exports: {} };
  script.runInThisContext()(
    module.exports,
    createRequire(BUNDLE),
    module,
    BUNDLE,
    dirname(BUNDLE),
    (specifier) => import(specifier),
  );
  return module.exports;
};

// tsc's output is run instead when it is newer: dist/ was rebuilt by `tsc` alone after the bundle.
const { main } = built(BUNDLE) >= built(TSC_MAIN) ? loadBundle() : await import(TSC_MAIN);

process.exitCode = await main(process.argv.slice(2));
