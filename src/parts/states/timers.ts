import { randomUUID } from 'node:crypto';
import type { ResourcePlan, StateMachinePlan } from '../../plan/types.ts';
import type { RuntimeContext, WriteHook } from '../../runtime/context.ts';
import type { WorkerHealth } from '../../runtime/workers.ts';
import type { Row, Timer } from '../../storage/index.ts';

/** Schedules the timed transitions that leave the record's current state. */
export const scheduleTimers = async (
  ctx: RuntimeContext,
  resource: ResourcePlan,
  machine: StateMachinePlan,
  row: Row,
) => {
  const state = String(row[machine.field]);
  const entered = Date.parse(String(row.updatedAt));
  for (const t of machine.transitions) {
    if (t.afterMs === undefined || !t.from.includes(state)) continue;
    await ctx.store.stateLog.schedule({
      resource: resource.name,
      recordId: row.id,
      transition: t.name,
      fromState: state,
      dueAt: new Date(entered + t.afterMs).toISOString(),
    });
  }
};

/** A new record enters its initial state: its timers start then. */
export const timersOnCreate: (ctx: RuntimeContext) => WriteHook = (ctx) => (event) => {
  if (event.kind !== 'created' || !event.resource.states) return;
  return scheduleTimers(ctx, event.resource, event.resource.states, event.after);
};

export type FireTimer = (timer: Timer) => Promise<void>;

const LEASE_MS = 30_000;

/**
 * Fires due timers. Timers live in the database, so they survive restarts (an overdue one fires at start)
 * and a lease keeps two processes sharing one database from firing the same timer; the transition's
 * compare-and-set makes a second firing a no-op even if a lease ran out.
 */
export const startTimerWorker = (ctx: RuntimeContext, fire: FireTimer, pollMs: number, health: WorkerHealth) => {
  const owner = randomUUID();
  let stopped = false;
  let handle: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const tick = async () => {
    const due = await ctx.store.stateLog.claimDue(ctx.now(), owner, LEASE_MS, 100);
    for (const timer of due) {
      if (stopped) return;
      await fire(timer);
    }
  };
  const loop = () => {
    if (stopped) return;
    running = tick()
      .then(
        () => health.ok(),
        (error) => {
          if (!stopped) health.failed(error, 'firing due timers');
        },
      )
      .finally(() => {
        if (!stopped) handle = setTimeout(loop, pollMs);
      });
  };
  loop();
  return {
    async stop() {
      stopped = true;
      if (handle) clearTimeout(handle);
      await running;
    },
  };
};
