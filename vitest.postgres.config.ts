import { defineConfig } from 'vitest/config';
import base from './vitest.config.ts';

// The HTTP suites again, on PostgreSQL (`npm run test:postgres`): the helpers open a PostgresStore in a schema of
// its own per server when NF_STORE=postgres. The storage contract runs both stores in the default run already. Left
// out: suites about SQLite itself (its file, its faults, its processes) and the ones that read its file directly.
// (Not mergeConfig: it would add this list to the default one instead of replacing it.)
export default defineConfig({
  test: {
    ...base.test,
    include: [
      'test/access-*.test.ts',
      'test/api-keys.test.ts',
      'test/auth-*.test.ts',
      'test/bad-input-*.test.ts',
      'test/crud*.test.ts',
      'test/events-declared.test.ts',
      'test/events-outbox.test.ts',
      'test/events-stream.test.ts',
      'test/events-webhooks.test.ts',
      'test/idempotency.test.ts',
      'test/example-*.test.ts',
      'test/limits-built-in-routes.test.ts',
      'test/limits-overload.test.ts',
      'test/limits-quotas.test.ts',
      'test/limits-rate.test.ts',
      'test/limits-sizes.test.ts',
      'test/limits-timeouts.test.ts',
      'test/lists*.test.ts',
      'test/pipeline-wire.test.ts',
      'test/reliability-bad-input*.test.ts',
      'test/resources-*.test.ts',
      'test/shapes-*.test.ts',
      'test/states-orders.test.ts',
      'test/states-timers.test.ts',
      'test/versioning-*.test.ts',
      'test/webhook-verify.test.ts',
      'test/webhooks-signing-payloads.test.ts',
      'test/webhooks-ssrf.test.ts',
    ],
    env: { NF_STORE: 'postgres' },
  },
});
