import type { Plan } from '../../plan/types.ts';
import type { RuntimeContext } from '../../runtime/context.ts';
import type { RouteSpec } from '../../runtime/route-spec.ts';
import type { Timer } from '../../storage/index.ts';
import { boundHandler } from '../endpoints/route-binder.ts';
import { ApiError } from '../errors/api-error.ts';
import type { FireTimer } from './timers.ts';
import { compileHistoryHandler, compileTransition } from './transition-runtime.ts';

/** Compiles every state machine of the plan: one POST per transition, one GET history per resource, the timer firer. */
export const compileStateMachines = (
  ctx: RuntimeContext,
  plan: Plan,
): { routes: RouteSpec[]; fire: FireTimer; hasTimers: boolean } => {
  const routes: RouteSpec[] = [];
  const appliers = new Map<string, ReturnType<typeof compileTransition>['apply']>();
  let hasTimers = false;
  for (const resource of plan.resources) {
    const machine = resource.states;
    if (!machine) continue;
    for (const t of machine.transitions) {
      const compiled = compileTransition(ctx, resource, machine, t);
      appliers.set(`${resource.name}.${t.name}`, compiled.apply);
      routes.push({
        method: 'POST',
        path: `${resource.itemPath}/${t.path}`,
        operation: `${resource.name}.${t.name}`,
        kind: { resource: resource.name, action: t.name, transition: true },
        // A transition's input is its body; a transition without input may be sent with none.
        body: 'optional',
        handler: boundHandler(ctx, resource, resource.item, compiled.handler),
      });
      if (t.afterMs !== undefined) hasTimers = true;
    }
    routes.push({
      method: 'GET',
      path: `${resource.itemPath}/history`,
      operation: `${resource.name}.history`,
      kind: { resource: resource.name, action: 'history' },
      body: 'none',
      handler: boundHandler(ctx, resource, resource.item, compileHistoryHandler(ctx, resource)),
    });
  }
  const fire: FireTimer = async (timer: Timer) => {
    await ctx.store.transaction(async () => {
      const apply = appliers.get(`${timer.resource}.${timer.transition}`);
      const row = await ctx.store.get(timer.resource, timer.recordId);
      const machine = ctx.plan.resourcesByName.get(timer.resource)?.states;
      if (apply && row && machine && row[machine.field] === timer.fromState) {
        try {
          await apply({ row, input: {}, actor: 'system' });
        } catch (error) {
          // A guard that does not hold, or a record that moved on: the timer simply lapses.
          if (!(error instanceof ApiError)) throw error;
        }
      }
      await ctx.store.stateLog.finish(timer.id);
    });
  };
  return { routes, fire, hasTimers };
};
