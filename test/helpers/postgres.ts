import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The PostgreSQL server the tests use (trust auth, database `test`); NINEFOLD_TEST_PG overrides it. */
export const PG_URL = process.env.NINEFOLD_TEST_PG ?? 'postgres://postgres@127.0.0.1:5432/test';

const made = new Set<string>();

/** A URL naming a schema of its own (created by the store on first use), dropped by dropSchemas. */
export const freshPgUrl = (): string => {
  const schema = `nf_t_${randomBytes(6).toString('hex')}`;
  made.add(schema);
  return `${PG_URL}?schema=${schema}`;
};

export const schemaOf = (url: string): string => new URL(url).searchParams.get('schema') ?? 'public';

/** Runs one statement on a connection of its own. */
export const pgExec = async (sql: string, params: unknown[] = []): Promise<pg.QueryResult> => {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    return await client.query(sql, params);
  } finally {
    await client.end();
  }
};

/** Drops a schema and everything in it, as an operator (or a fault) would under a running store. */
export const dropSchema = (url: string) => pgExec(`DROP SCHEMA IF EXISTS "${schemaOf(url)}" CASCADE`);

/** Drops every schema freshPgUrl named in this test file. */
export const dropSchemas = async () => {
  for (const schema of made) await pgExec(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  made.clear();
};
