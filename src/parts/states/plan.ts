import type { StateMachinePlan, StatePlan } from '../../plan/types.ts';
import { parseDuration } from '../../spec/units.ts';
import type { StatesSpec } from './schema.ts';

const asList = (value: string | readonly string[]): string[] => (typeof value === 'string' ? [value] : [...value]);

/** Every state a machine names: declared, initial, final, and each transition's ends, in first-seen order. */
export const stateNames = (machine: StatesSpec): string[] => {
  const names = new Set<string>();
  const declared = machine.states;
  if (Array.isArray(declared)) for (const s of declared) names.add(s);
  else if (declared) for (const s of Object.keys(declared)) names.add(s);
  names.add(machine.initial);
  for (const t of Object.values(machine.transitions ?? {})) {
    for (const f of asList(t.from)) names.add(f);
    names.add(t.to);
  }
  for (const f of machine.final ?? []) names.add(f);
  return [...names];
};

const _capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

export const planStateMachine = (resource: string, machine: StatesSpec): StateMachinePlan => {
  const declared = Array.isArray(machine.states) || !machine.states ? {} : machine.states;
  const finalSet = new Set([
    ...(machine.final ?? []),
    ...Object.entries(declared)
      .filter(([, s]) => s.final)
      .map(([n]) => n),
  ]);
  const states: StatePlan[] = stateNames(machine).map((name) => {
    const meta = declared[name];
    const editable = meta?.editable ?? machine.editable?.[name];
    return {
      name,
      ...(meta?.description ? { description: meta.description } : {}),
      final: finalSet.has(name),
      ...(editable ? { editable } : {}),
    };
  });
  return {
    field: machine.field ?? 'status',
    initial: machine.initial,
    states,
    transitions: Object.entries(machine.transitions ?? {}).map(([name, t]) => {
      const afterMs = parseDuration(t.after);
      return {
        name,
        from: asList(t.from),
        to: t.to,
        ...(t.description ? { description: t.description } : {}),
        ...(t.when ? { when: t.when } : {}),
        ...(t.input ? { input: t.input } : {}),
        roles: t.roles ?? [],
        ...(t.after && afterMs !== undefined ? { after: t.after, afterMs } : {}),
        event: t.event ?? `${resource}.${t.to}`,
        path: t.path ?? name,
      };
    }),
  };
};
