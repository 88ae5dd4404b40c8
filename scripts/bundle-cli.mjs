// Bundles the command line (src/cli/main.ts and every pure-JS package it loads) into dist/cli-bundle/, for
// bin/ninefold.js: Node then reads a few files instead of resolving and compiling some 400 modules, which was
// most of `ninefold serve`'s start-up (bench/RESULTS.md, "Start-up"). Commands and the parts loaded on demand stay
// chunks of their own (splitting), so `serve` still does not load the emitters. dist/index.js, the library, is
// tsc's output as before. Run by `npm run build`, after tsc.
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'dist/cli-bundle');

// Left to Node: native modules, packages that read files of their own at run time, and esbuild (a binary).
const EXTERNAL = ['better-sqlite3', 'pg', 'pg-native', 'esbuild', '@scalar/fastify-api-reference'];

rmSync(OUT, { recursive: true, force: true });
await build({
  absWorkingDir: ROOT,
  entryPoints: { ninefold: 'src/cli/main.ts' },
  outdir: OUT,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.19',
  external: EXTERNAL,
  // Bundled CommonJS packages call require() for Node's own modules.
  banner: {
    js: "import { createRequire as __ninefoldCreateRequire } from 'node:module';\nconst require = __ninefoldCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
  sourcemap: process.env.NINEFOLD_BUNDLE_MAP ? 'linked' : false,
});
