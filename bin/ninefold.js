#!/usr/bin/env node
import { statSync } from 'node:fs';

// The bundle `npm run build` makes (scripts/bundle-cli.mjs) starts in a fraction of the time of tsc's hundreds of
// modules. tsc's output is run instead when it is newer: dist/ was rebuilt by `tsc` alone after the bundle.
const built = (path) => statSync(new URL(path, import.meta.url), { throwIfNoEntry: false })?.mtimeMs ?? -1;
const entry =
  built('../dist/cli-bundle/ninefold.js') >= built('../dist/cli/main.js')
    ? '../dist/cli-bundle/ninefold.js'
    : '../dist/cli/main.js';
const { main } = await import(entry);

process.exitCode = await main(process.argv.slice(2));
