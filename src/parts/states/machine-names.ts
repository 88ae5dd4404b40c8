import { isRecord } from '../../spec/check-context.ts';
import type { PathSegment } from '../../spec/source-map.ts';
import { closest } from '../../spec/validate-shape.ts';
import type { Raw } from '../resources/lookup.ts';

export interface StateMention {
  readonly name: string;
  readonly path: PathSegment[];
  readonly role: 'from' | 'to' | 'final';
}

/** The states of one machine and where each is named, read defensively from the raw spec. */
export interface MachineNames {
  /** Declared states when `states` is given, else every state named anywhere (as the plan does) but typos. */
  readonly all: string[];
  /** Where a state is first named: its declaration, else the first transition end or final entry. */
  readonly firstSeen: Map<string, PathSegment[]>;
  /** Transition ends and `final` entries, each with its path. */
  readonly mentions: StateMention[];
  readonly final: Set<string>;
  known(name: string): boolean;
  /** The state a name stands for in the graph: a likely typo stands for the state it resembles. */
  canonical(name: string): string;
}

const fromList = (from: unknown, path: PathSegment[]): StateMention[] =>
  typeof from === 'string'
    ? [{ name: from, path, role: 'from' }]
    : Array.isArray(from)
      ? from.flatMap((f, i) => (typeof f === 'string' ? [{ name: f, path: [...path, i], role: 'from' as const }] : []))
      : [];

/**
 * Without a `states` list every name a transition uses is a state, so a misspelt `from` or `to` quietly makes a
 * new one. States come into being as `initial`, `final` or a transition's `to`; a `from` only refers to one. So a
 * `from` that names none of those, and a `to` that no transition leaves (and is not final), is taken for a typo
 * of the state it is within a small edit distance of. Answers each typo with the state it stands for.
 */
const likelyTypos = (initial: unknown, mentions: readonly StateMention[]): Map<string, string> => {
  const named = (role: StateMention['role']) => new Set(mentions.filter((m) => m.role === role).map((m) => m.name));
  const [from, to, final] = [named('from'), named('to'), named('final')];
  const entered = new Set([...(typeof initial === 'string' ? [initial] : []), ...to, ...final]);
  const typos = new Map<string, string>();
  for (const name of from) {
    const near = entered.has(name) ? undefined : closest(name, [...entered]);
    if (near) typos.set(name, near);
  }
  const left = new Set([...from].map((name) => typos.get(name) ?? name));
  for (const name of to) {
    if (left.has(name) || final.has(name) || name === initial) continue;
    const near = closest(
      name,
      [...new Set([...entered, ...left])].filter((other) => other !== name),
    );
    if (near) typos.set(name, near);
  }
  return typos;
};

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
    if (typeof t.to === 'string') mentions.push({ name: t.to, path: [...at, 'to'], role: 'to' });
  }
  const final = new Set<string>();
  if (Array.isArray(machine.final))
    for (const [i, f] of machine.final.entries())
      if (typeof f === 'string') {
        mentions.push({ name: f, path: [...base, 'final', i], role: 'final' });
        final.add(f);
      }
  if (isRecord(declared))
    for (const [s, meta] of Object.entries(declared)) if (isRecord(meta) && meta.final === true) final.add(s);

  const typos = explicit ? new Map<string, string>() : likelyTypos(machine.initial, mentions);
  if (!explicit) {
    if (typeof machine.initial === 'string' && machine.initial.trim() !== '')
      see(machine.initial, [...base, 'initial']);
    for (const m of mentions) if (!typos.has(m.name)) see(m.name, m.path);
  }
  const all = [...firstSeen.keys()];
  return {
    all,
    firstSeen,
    mentions,
    final,
    known: (name) => firstSeen.has(name),
    canonical: (name) => typos.get(name) ?? name,
  };
};
