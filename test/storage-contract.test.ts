import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { SqliteStore } from '../src/storage/index.ts';
import { storeContract, tempDir } from './storage/contract.ts';

// PostgreSQL joins this list when its store lands; the contract itself does not change.
storeContract('sqlite', {
  create: () => join(tempDir(), 'contract.db'),
  open: (path) => new SqliteStore({ path }),
  lose: (path) => rmSync(path),
});
