import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { dropRunSchemas } from './helpers/postgres.ts';

/**
 * Builds dist (and the command line's bundle) once so CLI tests run the real `bin/ninefold.js`, and names this run, so that the PostgreSQL schemas
 * its tests leave behind (a server not closed, a test that failed half-way) are dropped at the end, and no other
 * run's (other runs may share the database).
 */
export default function setup(): () => Promise<void> {
  const run = randomBytes(3).toString('hex');
  process.env.NF_TEST_RUN = run;
  const result = spawnSync('npx', ['tsc', '-p', 'tsconfig.json'], { encoding: 'utf8', stdio: 'pipe' });
  // tsc emits even when some file has type errors; only a missing entry point stops the CLI tests.
  if (!existsSync('dist/cli/main.js')) throw new Error(`build failed:\n${result.stdout}${result.stderr}`);
  // bin/ninefold.js runs the bundle of the command line (npm run build's second step) when it is the newer.
  const bundle = spawnSync(process.execPath, ['scripts/bundle-cli.mjs'], { encoding: 'utf8', stdio: 'pipe' });
  if (bundle.status !== 0) throw new Error(`bundling failed:\n${bundle.stdout}${bundle.stderr}`);
  return () => dropRunSchemas(`nf_t_${run}_`).catch(() => undefined);
}
