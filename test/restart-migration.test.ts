import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { StoreError } from '../src/storage/index.ts';
import { SqliteStore } from '../src/storage/sqlite/sqlite-store.ts';
import { call, planOf, serveSpec, tempDbPath } from './helpers/serve-spec.ts';
import { waitFor } from './helpers/wait-for.ts';

const spec = (fields: string) => `
ninefold: 1
service: { name: notes, title: Notes, purpose: Restarts and migrations. }
resources:
  Note:
    idPrefix: nte
    fields:
${fields}
endpoints:
  Note: { operations: [list, get, create], path: /notes, list: { pageSize: { default: 100, max: 100 } } }
`;
const V1 = spec('      title: { type: string, required: true }\n      body: { type: string }');
const V2 = spec(
  '      title: { type: string, required: true }\n      body: { type: string }\n      pinned: { type: boolean, default: false }',
);
const V3 = spec('      title: { type: string, required: true }');

const BIN = join(process.cwd(), 'bin', 'ninefold.js');
beforeAll(() => {
  if (!existsSync('dist/cli/main.js')) spawnSync('npx', ['tsc', '-p', 'tsconfig.json'], { stdio: 'ignore' });
});

describe('restart', () => {
  it('every record is still there after a restart on the same file', async () => {
    const first = await serveSpec(V1);
    const ids: string[] = [];
    for (let i = 0; i < 20; i++)
      ids.push((await call(first.url, 'POST', '/notes', { json: { title: `t${i}` } })).body.id);
    await first.close();
    const second = await serveSpec(V1, { dbPath: first.dbPath });
    const list = await call(second.url, 'GET', '/notes?limit=100&sort=createdAt');
    expect(list.body.data.map((n: { id: string }) => n.id)).toEqual(ids);
    await second.close({ remove: true });
  });
});

describe('migration', () => {
  it('a field added to the spec migrates by itself; old records read with it empty', async () => {
    const first = await serveSpec(V1);
    const old = await call(first.url, 'POST', '/notes', { json: { title: 'old' } });
    await first.close();
    const second = await serveSpec(V2, { dbPath: first.dbPath });
    expect((await call(second.url, 'GET', `/notes/${old.body.id}`)).body.title).toBe('old');
    const fresh = await call(second.url, 'POST', '/notes', { json: { title: 'new', pinned: true } });
    expect(fresh.status).toBe(201);
    expect(fresh.body.pinned).toBe(true);
    await second.close({ remove: true });
  });

  it('dropping a field that holds data is refused, naming the field and --allow-data-loss; data stays', async () => {
    const first = await serveSpec(V1);
    const note = await call(first.url, 'POST', '/notes', { json: { title: 'keep', body: 'precious' } });
    await first.close();

    const store = new SqliteStore({ path: first.dbPath });
    const error = await store.migrate(planOf(V3)).catch((e: unknown) => e);
    await store.close();
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).kind).toBe('migration-refused');
    expect((error as StoreError).message).toMatch(/Note\.body was removed from the spec; 1 record/);
    expect((error as StoreError).message).toContain('--allow-data-loss');

    const specFile = join(first.dbPath, '..', 'v3.yaml');
    writeFileSync(specFile, V3);
    const cli = spawnSync('node', [BIN, 'serve', specFile, '--db', first.dbPath, '--port', '0'], {
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(cli.status).toBe(1);
    expect(cli.stderr).toContain('Note.body was removed from the spec');
    expect(cli.stderr).toContain('--allow-data-loss');

    const again = await serveSpec(V1, { dbPath: first.dbPath });
    expect((await call(again.url, 'GET', `/notes/${note.body.id}`)).body.body).toBe('precious');
    await again.close();

    const lossy = await serveSpec(V3, { dbPath: first.dbPath, allowDataLoss: true });
    const after = await call(lossy.url, 'GET', `/notes/${note.body.id}`);
    expect(after.body).toMatchObject({ title: 'keep' });
    expect(after.body.body).toBeUndefined();
    await lossy.close({ remove: true });
  });
});

/** Starts the real CLI on port 0 and resolves with its address once it prints it. */
const startCli = (specFile: string, dbPath: string) =>
  new Promise<{ child: ChildProcessWithoutNullStreams; url: string }>((resolve, reject) => {
    const child = spawn('node', [BIN, 'serve', specFile, '--db', dbPath, '--port', '0', '--log-level', 'silent']);
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const url = /serving at (http:\/\/[^\s]+)/.exec(out)?.[1];
      if (url) resolve({ child, url });
    });
    child.on('exit', (code) => reject(new Error(`CLI exited ${code} before serving`)));
  });

describe('SIGTERM during a burst of writes', () => {
  it('the file passes integrity_check and every answered 201 is stored', async () => {
    const dbPath = tempDbPath();
    const specFile = join(dbPath, '..', 'v1.yaml');
    writeFileSync(specFile, V1);
    const { child, url } = await startCli(specFile, dbPath);
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    const created: string[] = [];
    let stop = false;
    const writer = async (w: number) => {
      for (let i = 0; !stop; i++) {
        try {
          const r = await call(url, 'POST', '/notes', { json: { title: `w${w}-${i}` } });
          if (r.status === 201) created.push(r.body.id);
        } catch {
          return; // the server has gone away
        }
      }
    };
    const writers = [0, 1, 2, 3].map(writer);
    // The burst is under way (a loaded machine may take far longer than usual to answer the first ones).
    await waitFor(
      () => created.length >= 20,
      () => `20 answered writes; ${created.length} so far`,
    );
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    stop = true;
    await Promise.all(writers);

    const db = new Database(dbPath, { readonly: true });
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      const stored = new Set((db.prepare('SELECT id FROM note').all() as Array<{ id: string }>).map((r) => r.id));
      for (const id of created) expect(stored.has(id)).toBe(true);
    } finally {
      db.close();
    }
  });
});
