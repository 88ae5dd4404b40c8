import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { checkSource } from '../src/spec/check.ts';
import { parseSpecText } from '../src/spec/load.ts';
import { SqliteStore } from '../src/storage/index.ts';
import { call, type Served, tempDbPath } from './helpers/serve-spec.ts';
import { eventually, historyOf, serveStates } from './helpers/serve-states.ts';

// Timed transitions: `after: 1s` fires by itself, is cancelled by a manual transition, survives a restart,
// and fires once when two processes share one database file.
const SPEC = `
ninefold: 1
service: { name: holds, title: Holds, purpose: Timer tests of state transitions. }
resources:
  Hold:
    idPrefix: hld
    fields:
      title: { type: string, required: true }
    states:
      initial: held
      final: [released, expired]
      transitions:
        release: { from: held, to: released }
        expire: { from: held, to: expired, after: 1s }
endpoints:
  Hold: { operations: [list, get, create], path: /holds }
`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const open: Served[] = [];
const children: ChildProcess[] = [];
afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  for (const s of open) await s.close().catch(() => undefined);
});
const serve = async (dbPath?: string) => {
  const s = await serveStates(SPEC, { timerPollMs: 100, ...(dbPath ? { dbPath } : {}) });
  open.push(s);
  return s;
};
const newHold = async (url: string, title: string) => {
  const r = await call(url, 'POST', '/holds', { json: { title } });
  expect(r.status).toBe(201);
  expect(r.body.status).toBe('held');
  return r.body.id as string;
};
const stateOf = async (url: string, id: string) => (await call(url, 'GET', `/holds/${id}`)).body.status;

describe('after: 1s', () => {
  it('a short duration like 1s passes the checker', () => {
    const checked = checkSource({ ...parseSpecText(SPEC, 'inline.yaml'), dir: process.cwd() });
    expect(checked.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  });

  it('the record takes the timed transition by itself once the delay is over, and only then', async () => {
    const s = await serve();
    const created = Date.now();
    const id = await newHold(s.url, 'a');
    await sleep(500);
    expect(await stateOf(s.url, id)).toBe('held');
    expect(await eventually(async () => (await stateOf(s.url, id)) === 'expired', 3000)).toBe(true);
    expect(Date.now() - created).toBeGreaterThanOrEqual(1000);
    const history = await historyOf(s.url, `/holds/${id}`);
    expect(history).toEqual([
      { transition: 'expire', from: 'held', to: 'expired', at: expect.any(String), input: {}, actor: 'system' },
    ]);
    expect(Date.parse(history[0]?.at ?? '') - created).toBeGreaterThanOrEqual(900);
    expect(s.countRows('_ninefold_timers')).toBe(0);
  });

  it('a transition taken by hand before the delay cancels the timer', async () => {
    const s = await serve();
    const id = await newHold(s.url, 'b');
    const released = await call(s.url, 'POST', `/holds/${id}/release`);
    expect(released.status).toBe(200);
    expect(released.body.status).toBe('released');
    expect(s.countRows('_ninefold_timers')).toBe(0);
    await sleep(1600);
    expect(await stateOf(s.url, id)).toBe('released');
    expect((await historyOf(s.url, `/holds/${id}`)).map((h) => h.transition)).toEqual(['release']);
  });

  it('survives a restart: timers overdue while the server was down fire when a new server starts', async () => {
    const first = await serve();
    const ids = [await newHold(first.url, 'c1'), await newHold(first.url, 'c2'), await newHold(first.url, 'c3')];
    await first.close();
    open.splice(open.indexOf(first), 1);
    await sleep(1300);
    const second = await serve(first.dbPath);
    expect(
      await eventually(async () => {
        for (const id of ids) if ((await stateOf(second.url, id)) !== 'expired') return false;
        return true;
      }, 3000),
    ).toBe(true);
    for (const id of ids) {
      expect((await historyOf(second.url, `/holds/${id}`)).map((h) => h.transition)).toEqual(['expire']);
    }
    expect(second.countRows('_ninefold_timers')).toBe(0);
  });
});

/** Starts `ninefold serve` in its own process and resolves with the URL it prints. */
const startCli = (specFile: string, dbPath: string) =>
  new Promise<{ url: string; child: ChildProcess }>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['bin/ninefold.js', 'serve', specFile, '--db', dbPath, '--port', '0', '--log-level', 'error'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.push(child);
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`serve did not start:\n${out}${err}`)), 20_000);
    child.stdout?.on('data', (chunk) => {
      out += chunk;
      const url = /serving at (http:\/\/\S+)/.exec(out)?.[1];
      if (url) {
        clearTimeout(timer);
        resolve({ url, child });
      }
    });
    child.stderr?.on('data', (chunk) => {
      err += chunk;
    });
    child.on('exit', (code) => reject(new Error(`serve exited with ${code}:\n${out}${err}`)));
  });

const stop = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });

describe('two processes on one database file', () => {
  it('each timer fires exactly once, and the file stays sound', async () => {
    const dbPath = tempDbPath();
    const specFile = join(dirname(dbPath), 'service.yaml');
    writeFileSync(specFile, SPEC);
    // One after the other, so the second finds the schema the first migrated.
    const a = await startCli(specFile, dbPath);
    const b = await startCli(specFile, dbPath);
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push(await newHold(i % 2 ? b.url : a.url, `d${i}`));

    await sleep(3000);
    expect(
      await eventually(async () => {
        for (const id of ids) if ((await stateOf(a.url, id)) !== 'expired') return false;
        return true;
      }, 3000),
    ).toBe(true);
    for (const id of ids) {
      const history = await historyOf(b.url, `/holds/${id}`);
      expect(
        history.map((h) => [h.transition, h.actor]),
        id,
      ).toEqual([['expire', 'system']]);
    }
    await Promise.all([stop(a.child), stop(b.child)]);

    const db = new Database(dbPath, { readonly: true, fileMustExist: true });
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(db.prepare('SELECT count(*) AS n FROM _ninefold_history').get()).toEqual({ n: 20 });
      expect(db.prepare('SELECT count(*) AS n FROM _ninefold_timers').get()).toEqual({ n: 0 });
    } finally {
      db.close();
    }
  });
});

describe('the timer lease', () => {
  it('two connections claiming at once get disjoint timers, and a claimed timer stays claimed until its lease ends', async () => {
    const dbPath = tempDbPath();
    const one = new SqliteStore({ path: dbPath });
    const two = new SqliteStore({ path: dbPath });
    try {
      const now = new Date();
      for (let i = 0; i < 20; i++) {
        await one.stateLog.schedule({
          resource: 'Hold',
          recordId: `hld_${i}`,
          transition: 'expire',
          fromState: 'held',
          dueAt: new Date(now.getTime() - 1000).toISOString(),
        });
      }
      const [a, b] = await Promise.all([
        one.stateLog.claimDue(now, 'one', 30_000, 12),
        two.stateLog.claimDue(now, 'two', 30_000, 12),
      ]);
      const ids = [...a, ...b].map((t) => t.id);
      expect(ids.length).toBe(20);
      expect(new Set(ids).size).toBe(20);
      expect(await two.stateLog.claimDue(new Date(now.getTime() + 29_000), 'two', 30_000, 100)).toEqual([]);
      // A holder that died: after its lease the timer is claimable again.
      expect((await two.stateLog.claimDue(new Date(now.getTime() + 31_000), 'two', 30_000, 100)).length).toBe(20);
    } finally {
      await one.close();
      await two.close();
    }
  });
});
