import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // The only deadline a test has (its waits have none of their own), so it must hold on a 2-core machine
    // shared with other test runs: the slowest tests (node processes started, the TypeScript compiler run) need a
    // few seconds of CPU, which took over 30 s of wall time there at a load average of 14.
    testTimeout: 120_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
