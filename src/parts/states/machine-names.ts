import { isRecord } from '../../spec/check-context.ts';
import type { PathSegment } from '../../spec/source-map.ts';
import type { Raw } from '../resources/lookup.ts';

export interface StateMention {
  readonly name: string;
  readonly path: PathSegment[];
}

/** The states of one machine and where each is named, read defensively from the raw spec. */
export interface MachineNames {
  /** Declared states when `states` is given, else every state named anywhere (as the plan does). */
  readonly all: string[];
  /** Where a state is first named: its declaration, else the first transition end or final entry. */
  readonly firstSeen: Map<string, PathSegment[]>;
  /** Transition ends and `final` entries, each with its path. */
  readonly mentions: StateMention[];
  readonly final: Set<string>;
  known(name: string): boolean;
}

const fromList = (from: unknown, path: PathSegment[]): StateMention[] =>
  typeof from === 'string'
    ? [{ name: from, path }]
    : Array.isArray(from)
      ? from.flatMap((f, i) => (typeof f === 'string' ? [{ name: f, path: [...path, i] }] : []))
      : [];

export const machineNames = (machine: Raw, base: PathSegment[]): MachineNames => {
  const firstSeen = new Map<string, PathSegment[]>();
  const see = (name: string, path: PathSegment[]) => {
    if (!firstSeen.has(name)) firstSeen.set(name, path);
  };
  const declared = machine.states;
  const explicit = Array.isArray(declared) || isRecord(declared);
  if (Array.isArray(declared))
    for (const [i, s] of declared.entries()) if (typeof s === 'string') see(s, [...base, 'states', i]);
  if (isRecord(declared)) for (const s of Object.keys(declared)) see(s, [...base, 'states', s]);

  const mentions: StateMention[] = [];
  const transitions = isRecord(machine.transitions) ? machine.transitions : {};
  for (const [name, t] of Object.entries(transitions)) {
    if (!isRecord(t)) continue;
    const at = [...base, 'transitions', name];
    mentions.push(...fromList(t.from, [...at, 'from']));
    if (typeof t.to === 'string') mentions.push({ name: t.to, path: [...at, 'to'] });
  }
  const final = new Set<string>();
  if (Array.isArray(machine.final))
    for (const [i, f] of machine.final.entries())
      if (typeof f === 'string') {
        mentions.push({ name: f, path: [...base, 'final', i] });
        final.add(f);
      }
  if (isRecord(declared))
    for (const [s, meta] of Object.entries(declared)) if (isRecord(meta) && meta.final === true) final.add(s);

  if (!explicit) {
    if (typeof machine.initial === 'string' && machine.initial.trim() !== '')
      see(machine.initial, [...base, 'initial']);
    for (const m of mentions) see(m.name, m.path);
  }
  const all = [...firstSeen.keys()];
  return { all, firstSeen, mentions, final, known: (name) => firstSeen.has(name) };
};
