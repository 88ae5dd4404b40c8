import { join } from 'node:path';
import { SqliteStore } from '../src/storage/index.ts';
import { storeContract, tempDir } from './storage/contract.ts';

// PostgreSQL joins this list when its store lands; the contract itself does not change.
storeContract('sqlite', async () => new SqliteStore({ path: join(tempDir(), 'contract.db') }));
