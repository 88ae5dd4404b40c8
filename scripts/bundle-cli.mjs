// Bundles the command line (src/cli/main.ts and every pure-JS package it loads) into one CommonJS file,
// dist/cli-bundle/ninefold.cjs, and writes V8's code cache for it (ninefold.cjs.cache), for bin/ninefold.js. Node then
// reads two files instead of resolving and compiling some 400 modules, and V8 takes the compiled functions from the
// cache instead of parsing and compiling them again (bench/RESULTS.md, "Start-up"). Modules loaded on demand (the
// commands, the emitters, the PostgreSQL store) are in the file but run only when first imported. dist/index.js,
// the library, is tsc's output as before. Run by `npm run build`, after tsc.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'dist/cli-bundle');
const BUNDLE = join(OUT, 'ninefold.cjs');

// Left to Node: native modules, packages that read files of their own at run time, and esbuild (a binary).
const EXTERNAL = ['better-sqlite3', 'pg', 'pg-native', 'esbuild', '@scalar/fastify-api-reference'];

// A script compiled with a code cache cannot call import() on Node 20: the one module that does is swapped for one
// that asks bin/ninefold.js (the wrapper's `__ninefoldImport` parameter).
const importThroughBin = {
  name: 'import-through-bin',
  setup(build) {
    build.onLoad({ filter: /[\\/]src[\\/]runtime[\\/]import-external\.ts$/ }, () => ({
      contents: 'export const importExternal = (specifier) => __ninefoldImport(specifier);',
      loader: 'js',
    }));
  },
};

rmSync(OUT, { recursive: true, force: true });
await build({
  absWorkingDir: ROOT,
  entryPoints: ['src/cli/main.ts'],
  outfile: BUNDLE,
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20.19',
  external: EXTERNAL,
  plugins: [importThroughBin],
  // The file is the body of bin/ninefold.js's wrapper function, which passes `__filename`.
  define: { 'import.meta.url': '__ninefoldModuleUrl' },
  banner: { js: "var __ninefoldModuleUrl = require('node:url').pathToFileURL(__filename).href;" },
  // Less to read and to hash; names are kept, so stack traces in logs still name functions.
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'none',
  charset: 'ascii',
  logLevel: 'warning',
  sourcemap: process.env.NINEFOLD_BUNDLE_MAP ? 'linked' : false,
});

// bin/ninefold.js reads the file as Latin-1 (one byte per character, no UTF-8 decoding), so it must be ASCII.
// esbuild escapes every string but leaves regular expression literals alone (one package has `/µs/`): such a
// character becomes a \uXXXX escape, which means the same in a string, a regular expression and a name.
const text = readFileSync(BUNDLE, 'utf8').replace(
  /(?<!\\)[\u0080-\uffff]/g,
  (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
);
if (/[\u0080-\uffff]/.test(text)) throw new Error(`${BUNDLE} is not ASCII`);
if (/\bimport\(/.test(text)) throw new Error(`${BUNDLE} calls import() itself: route it through importExternal`);
writeFileSync(BUNDLE, text);

/**
 * The code cache: `ninefold serve` on the order desk, started by bin/ninefold.js with NINEFOLD_WRITE_CODE_CACHE set,
 * asked for /healthz and stopped; at exit it writes what V8 compiled by then. A failure only costs start-up time, so
 * it is reported and the build goes on.
 */
const writeCodeCache = async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ninefold-code-cache-'));
  const written = `${BUNDLE}.cache.tmp`;
  try {
    const child = spawn(
      process.execPath,
      [
        join(ROOT, 'bin/ninefold.js'),
        'serve',
        join(ROOT, 'examples/orders/service.yaml'),
        '--port',
        '0',
        '--db',
        join(dir, 'warm.db'),
        '--log-level',
        'error',
      ],
      { cwd: dir, env: { ...process.env, NINEFOLD_WRITE_CODE_CACHE: written }, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const exited = new Promise((done) => child.once('exit', (code) => done(code)));
    const address = await new Promise((done, fail) => {
      let out = '';
      child.stdout.on('data', (chunk) => {
        out += chunk;
        const found = /is serving at (\S+)/.exec(out);
        if (found) done(found[1]);
      });
      child.once('exit', (code) => fail(new Error(`the server exited with ${code} before serving`)));
    });
    const answer = await fetch(`${address}/healthz`);
    if (answer.status !== 200) throw new Error(`/healthz answered ${answer.status}`);
    child.kill('SIGTERM');
    if ((await exited) !== 0) throw new Error('the server did not stop cleanly');
    renameSync(written, `${BUNDLE}.cache`);
  } catch (error) {
    process.stderr.write(`bundle-cli: no code cache (start-up will be slower): ${error.message}\n`);
  } finally {
    rmSync(written, { force: true });
    rmSync(dir, { recursive: true, force: true });
  }
};
await writeCodeCache();
