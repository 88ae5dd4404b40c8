import { randomBytes } from 'node:crypto';
import pg from 'pg';
/** The PostgreSQL server the tests use (trust auth, database `test`); NINEFOLD_TEST_PG overrides it. */
export const PG_URL = process.env.NINEFOLD_TEST_PG ?? 'postgres://postgres@127.0.0.1:5432/test';
const made = new Set();
/** Names every schema of one test run (test/global-setup.ts drops what the run's tests left behind). */
export const RUN_PREFIX = `nf_t_${process.env.NF_TEST_RUN ?? 'x'}_`;
/** A URL naming a schema of its own (created by the store on first use), dropped by dropSchemas. */
export const freshPgUrl = () => {
    const schema = `${RUN_PREFIX}${randomBytes(5).toString('hex')}`;
    made.add(schema);
    return `${PG_URL}?schema=${schema}`;
};
export const schemaOf = (url) => new URL(url).searchParams.get('schema') ?? 'public';
/** Runs one statement on a connection of its own. */
export const pgExec = async (sql, params = []) => {
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    try {
        return await client.query(sql, params);
    }
    finally {
        await client.end();
    }
};
/** Drops a schema and everything in it, as an operator (or a fault) would under a running store. */
export const dropSchema = (url) => pgExec(`DROP SCHEMA IF EXISTS "${schemaOf(url)}" CASCADE`);
/** Drops every schema of this test run whose name starts with `prefix` (the run's leftovers). */
export const dropRunSchemas = async (prefix) => {
    const { rows } = await pgExec('SELECT nspname FROM pg_namespace WHERE starts_with(nspname, $1)', [prefix]);
    for (const { nspname } of rows)
        await pgExec(`DROP SCHEMA IF EXISTS "${nspname}" CASCADE`);
};
/** Drops every schema freshPgUrl named in this test file. */
export const dropSchemas = async () => {
    for (const schema of made)
        await pgExec(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    made.clear();
};
//# sourceMappingURL=postgres.js.map