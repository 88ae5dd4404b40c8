import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { SqliteStore } from '../src/storage/index.ts';
import { PostgresStore } from '../src/storage/postgres/postgres-store.ts';
import { dropSchema, dropSchemas, freshPgUrl } from './helpers/postgres.ts';
import { storeContract, tempDir } from './storage/contract.ts';

storeContract('sqlite', {
  create: () => join(tempDir(), 'contract.db'),
  open: (path) => new SqliteStore({ path }),
  lose: (path) => rmSync(path),
});

storeContract('postgres', {
  create: freshPgUrl,
  open: (url) => new PostgresStore({ url }),
  lose: async (url) => {
    await dropSchema(url);
  },
  concurrentWriters: true,
  sharedSignals: true,
});

afterAll(dropSchemas);
