import type { ServerPart } from '../../runtime/part.ts';
import { compileStateMachines } from './runtime.ts';
import { startTimerWorker, timersOnCreate } from './timers.ts';
import { onWire } from './transition-wire.ts';

/**
 * The states part on the server: one POST per transition and one GET history per resource with a state
 * machine, the write hook that starts a new record's timers, and the worker that fires due timers.
 */
export const statesPart: ServerPart = {
  name: 'states',
  install(host) {
    const { ctx } = host;
    host.writeHook(timersOnCreate(ctx));
    const machines = compileStateMachines(ctx, host.plan);
    for (const route of machines.routes) host.route(onWire(host.plan, route));
    if (!machines.hasTimers) return;
    host.worker('timers', (health) => startTimerWorker(ctx, machines.fire, host.options.timerPollMs ?? 1000, health));
  },
};
