import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { checkSource } from '../src/spec/check.ts';
import { parseSpecText } from '../src/spec/load.ts';
import { SqliteStore } from '../src/storage/index.ts';
import { call, planOf, type Served, tempDbPath } from './helpers/serve-spec.ts';
import { historyOf, serveStates } from './helpers/serve-states.ts';
import { testClock } from './helpers/test-clock.ts';
import { awaiting, waitFor } from './helpers/wait-for.ts';

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

const open: Served[] = [];
const children: ChildProcess[] = [];
afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  for (const s of open) await s.close().catch(() => undefined);
});
type Clock = ReturnType<typeof testClock>;
/** A server on the test's clock, whose timer worker looks for due timers every 5 ms. */
const serve = async (clock: Clock, dbPath?: string) => {
  const s = await serveStates(SPEC, { timerPollMs: 5, now: clock.now, ...(dbPath ? { dbPath } : {}) });
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
/** Polls the holds over HTTP, one at a time, until every one is in `state`. */
const allIn = (url: string, ids: string[], state: string) => {
  let last = '';
  return waitFor(
    async () => {
      for (const id of ids) {
        last = `${id} is ${await stateOf(url, id)}`;
        if (!last.endsWith(` ${state}`)) return false;
      }
      return true;
    },
    () => `every hold to be ${state}; last seen: ${last}`,
  );
};
/** Resolves once the timer worker has made a whole pass at the clock's current time (see testClock). */
const aWholePass = (clock: Clock) => awaiting(clock.reads(2), 'the timer worker to look at the clock');

// The clock is the test's: it jumps over the delay, and the test waits for what the worker does, never sleeps.
describe('after: 1s', () => {
  it('a short duration like 1s passes the checker', () => {
    const checked = checkSource({ ...parseSpecText(SPEC, 'inline.yaml'), dir: process.cwd() });
    expect(checked.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  });

  it('the record takes the timed transition by itself once the delay is over, and only then', async () => {
    const clock = testClock();
    const s = await serve(clock);
    const id = await newHold(s.url, 'a');
    clock.advance(999);
    await aWholePass(clock);
    expect(await stateOf(s.url, id)).toBe('held');
    clock.advance(1);
    await allIn(s.url, [id], 'expired');
    const history = await historyOf(s.url, `/holds/${id}`);
    expect(history).toEqual([
      { transition: 'expire', from: 'held', to: 'expired', at: clock.iso(1000), input: {}, actor: 'system' },
    ]);
    expect(await s.countRows('_ninefold_timers')).toBe(0);
  });

  it('a transition taken by hand before the delay cancels the timer', async () => {
    const clock = testClock();
    const s = await serve(clock);
    const id = await newHold(s.url, 'b');
    const released = await call(s.url, 'POST', `/holds/${id}/release`);
    expect(released.status).toBe(200);
    expect(released.body.status).toBe('released');
    expect(await s.countRows('_ninefold_timers')).toBe(0);
    clock.advance(1600);
    await aWholePass(clock);
    expect(await stateOf(s.url, id)).toBe('released');
    expect((await historyOf(s.url, `/holds/${id}`)).map((h) => h.transition)).toEqual(['release']);
  });

  it('survives a restart: timers overdue while the server was down fire when a new server starts', async () => {
    const clock = testClock();
    const first = await serve(clock);
    const ids = [await newHold(first.url, 'c1'), await newHold(first.url, 'c2'), await newHold(first.url, 'c3')];
    await first.close();
    open.splice(open.indexOf(first), 1);
    clock.advance(1300);
    const second = await serve(clock, first.dbPath);
    await allIn(second.url, ids, 'expired');
    for (const id of ids) {
      const history = await historyOf(second.url, `/holds/${id}`);
      expect(history.map((h) => [h.transition, h.at])).toEqual([['expire', clock.iso(1300)]]);
    }
    expect(await second.countRows('_ninefold_timers')).toBe(0);
  });
});

interface Started {
  readonly url: string;
  readonly child: ChildProcess;
}

/** Starts `ninefold serve` in its own process and resolves with the URL it prints. */
const startCli = (specFile: string, dbPath: string) =>
  new Promise<Started>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['bin/ninefold.js', 'serve', specFile, '--db', dbPath, '--port', '0', '--log-level', 'error'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.push(child);
    let out = '';
    let err = '';
    child.stdout?.on('data', (chunk) => {
      out += chunk;
      const url = /serving at (http:\/\/\S+)/.exec(out)?.[1];
      if (url) resolve({ url, child });
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
    // The schema is made first, so the two can start side by side (each is seconds of CPU on a loaded machine).
    const store = new SqliteStore({ path: dbPath });
    await store.migrate(planOf(SPEC), { allowDataLoss: false });
    await store.close();
    const [a, b] = await awaiting(
      Promise.all([startCli(specFile, dbPath), startCli(specFile, dbPath)]),
      'two ninefold serve processes to start',
    );
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push(await newHold(i % 2 ? b.url : a.url, `d${i}`));

    // Real processes on the real clock: the timers fall due a second after their holds were made.
    await allIn(a.url, ids, 'expired');
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
