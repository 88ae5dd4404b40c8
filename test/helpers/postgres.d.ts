import pg from 'pg';
/** The PostgreSQL server the tests use (trust auth, database `test`); NINEFOLD_TEST_PG overrides it. */
export declare const PG_URL: string;
/** Names every schema of one test run (test/global-setup.ts drops what the run's tests left behind). */
export declare const RUN_PREFIX: string;
/** A URL naming a schema of its own (created by the store on first use), dropped by dropSchemas. */
export declare const freshPgUrl: () => string;
export declare const schemaOf: (url: string) => string;
/** Runs one statement on a connection of its own. */
export declare const pgExec: (sql: string, params?: unknown[]) => Promise<pg.QueryResult>;
/** Drops a schema and everything in it, as an operator (or a fault) would under a running store. */
export declare const dropSchema: (url: string) => Promise<pg.QueryResult<any>>;
/** Drops every schema of this test run whose name starts with `prefix` (the run's leftovers). */
export declare const dropRunSchemas: (prefix: string) => Promise<void>;
/** Drops every schema freshPgUrl named in this test file. */
export declare const dropSchemas: () => Promise<void>;
