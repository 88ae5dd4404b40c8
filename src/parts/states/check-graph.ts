import { type CheckContext, isRecord } from '../../spec/check-context.ts';
import type { PathSegment } from '../../spec/source-map.ts';
import type { Raw } from '../resources/lookup.ts';
import type { MachineNames } from './machine-names.ts';

const fromNames = (from: unknown): string[] =>
  typeof from === 'string' ? [from] : Array.isArray(from) ? from.filter((f) => typeof f === 'string') : [];

/** Reachability from the initial state, dead ends, and transitions out of final states. */
export const checkGraph = (ctx: CheckContext, machine: Raw, names: MachineNames, base: PathSegment[]) => {
  const edges = new Map<string, Set<string>>();
  const transitions = isRecord(machine.transitions) ? machine.transitions : {};
  for (const [name, t] of Object.entries(transitions)) {
    if (!isRecord(t) || typeof t.to !== 'string') continue;
    const to = names.canonical(t.to);
    for (const [i, named] of fromNames(t.from).entries()) {
      const from = names.canonical(named);
      edges.set(from, (edges.get(from) ?? new Set()).add(to));
      if (names.final.has(named)) {
        const path = [...base, 'transitions', name, 'from', ...(Array.isArray(t.from) ? [i] : [])];
        ctx.report('transition-from-final-state', path, `"${name}" leaves "${named}", which is final`);
      }
    }
  }
  const reached = new Set<string>([String(machine.initial)]);
  const queue = [String(machine.initial)];
  for (let state = queue.shift(); state !== undefined; state = queue.shift()) {
    for (const next of edges.get(state) ?? []) {
      if (!reached.has(next)) {
        reached.add(next);
        queue.push(next);
      }
    }
  }
  for (const state of names.all) {
    const path = names.firstSeen.get(state) ?? [];
    if (!reached.has(state)) {
      ctx.report('unreachable-state', path, `no transition leads from "${String(machine.initial)}" to "${state}"`);
    } else if (!names.final.has(state) && !edges.has(state)) {
      ctx.report('dead-end-state', path, `"${state}" is not final but no transition leaves it`);
    }
  }
};
