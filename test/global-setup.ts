import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** Builds dist once so CLI tests run the real `bin/ninefold.js`. */
export default function setup(): void {
  const result = spawnSync('npx', ['tsc', '-p', 'tsconfig.json'], { encoding: 'utf8', stdio: 'pipe' });
  // tsc emits even when some file has type errors; only a missing entry point stops the CLI tests.
  if (!existsSync('dist/cli/main.js')) throw new Error(`build failed:\n${result.stdout}${result.stderr}`);
}
