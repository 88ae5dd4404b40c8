import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { NewEvent } from '../src/storage/index.ts';
import { PostgresStore } from '../src/storage/postgres/postgres-store.ts';
import { dropSchemas, freshPgUrl, PG_URL, schemaOf } from './helpers/postgres.ts';
import { awaiting, waitFor } from './helpers/wait-for.ts';
import { planOfSpec } from './storage/plan.ts';

const SPEC = `
ninefold: 1
service: { name: sequencer }
resources:
  Note:
    fields: { title: { type: string, required: true } }
`;

const event = (type: string): NewEvent => ({ type, time: new Date().toISOString(), data: {} });

const stores: PostgresStore[] = [];
const clients: pg.Client[] = [];
afterAll(async () => {
  for (const store of stores) await store.close();
  for (const client of clients) await client.end();
  await dropSchemas();
});

const openStore = async (url: string) => {
  const store = new PostgresStore({ url });
  stores.push(store);
  await store.migrate(planOfSpec(SPEC));
  return store;
};

describe('PostgreSQL event sequencer runs shared by the readers of one process', () => {
  it('a read never takes a numbering run that began before it was called', async () => {
    const url = freshPgUrl();
    const one = await openStore(url);
    const before = await one.events.lastSeq();
    const other = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${schemaOf(url)}` });
    clients.push(other);
    await other.connect();
    const holder = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${schemaOf(url)}` });
    clients.push(holder);
    await holder.connect();
    // Committed by a process that died before its own numbering run (a plain INSERT, as the store writes it).
    const diedBeforeItsRun = (type: string) =>
      other.query('INSERT INTO _ninefold_events (type, time, data) VALUES ($1, $2, $3)', [
        type,
        new Date().toISOString(),
        '{}',
      ]);
    await diedBeforeItsRun('Note.b');
    // A session holds B's row: the run A's commit starts takes its snapshot, then waits on that row.
    await holder.query('BEGIN');
    await holder.query('SELECT pk FROM _ninefold_events WHERE seq IS NULL FOR UPDATE');
    const [{ pid }] = (await holder.query('SELECT pg_backend_pid() AS pid')).rows;
    await one.transaction(async () => {
      await one.events.append(event('Note.a'));
    });
    await waitFor(
      async () =>
        (
          await other.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))', [
            pid,
          ])
        ).rows[0].n > 0,
      () => 'the numbering run to wait on the held row',
    );
    // Committed while that run waits: not in its snapshot.
    await diedBeforeItsRun('Note.c');
    const read = one.events.after(before, 10);
    await holder.query('COMMIT');
    const types = (await awaiting(read, 'the read')).map((e) => e.type);
    expect(types.sort()).toEqual(['Note.a', 'Note.b', 'Note.c']);
  });
});
