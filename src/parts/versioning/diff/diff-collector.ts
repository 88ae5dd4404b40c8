import { type PathSegment, toPointer } from '../../../spec/source-map.ts';
import { DIFF_RULES, type DiffRule } from './diff-rules.ts';

/** What a version's change would have to say to cover a breaking change: `{resource, rename|add|remove|retype}`. */
export interface ChangeSubject {
  readonly resource: string;
  readonly kind: 'rename' | 'add' | 'remove' | 'retype';
  /** The field; for a rename `from>to`. */
  readonly field: string;
}

/** One difference between two specs, in the spec it is found in (the old one for what is gone). */
export interface SpecChange {
  readonly rule: DiffRule;
  readonly breaking: boolean;
  readonly side: 'old' | 'new';
  readonly pointer: string;
  readonly message: string;
  readonly subject?: ChangeSubject;
}

export type Rec = Record<string, unknown>;
export const isRec = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);
export const recOf = (v: unknown): Rec => (isRec(v) ? v : {});
export const listOf = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** JSON with sorted keys, so that two values written in another key order compare equal. */
const canonical = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(canonical)
    : isRec(v)
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, canonical(v[k])]),
        )
      : v;
export const same = (a: unknown, b: unknown): boolean => JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));

/** Collects changes; a comparator claims the subtrees it has judged, and the generic walk judges the rest. */
export class DiffCollector {
  readonly changes: SpecChange[] = [];
  readonly #claimed = new Set<string>();

  add(rule: DiffRule, side: 'old' | 'new', path: readonly PathSegment[], message: string, subject?: ChangeSubject) {
    this.changes.push({
      rule,
      breaking: DIFF_RULES[rule].breaking,
      side,
      pointer: toPointer(path),
      message,
      ...(subject ? { subject } : {}),
    });
  }

  claim(path: readonly PathSegment[]) {
    this.#claimed.add(toPointer(path));
  }

  claimed(pointer: string): boolean {
    for (let p = pointer; ; p = p.slice(0, p.lastIndexOf('/'))) {
      if (this.#claimed.has(p)) return true;
      if (p === '') return false;
    }
  }
}

/** Calls back for each name only in the old record, only in the new one, and in both. */
export const eachKey = (
  o: unknown,
  n: unknown,
  fns: { removed?: (k: string) => void; added?: (k: string) => void; both?: (k: string) => void },
) => {
  const a = recOf(o);
  const b = recOf(n);
  for (const k of Object.keys(a)) if (!(k in b)) fns.removed?.(k);
  for (const k of Object.keys(b)) if (!(k in a)) fns.added?.(k);
  for (const k of Object.keys(b)) if (k in a) fns.both?.(k);
};

/** Items of a list of names: those gone and those new. */
export const listChange = (o: unknown, n: unknown) => {
  const a = listOf(o).map(String);
  const b = listOf(n).map(String);
  return { gone: a.filter((x) => !b.includes(x)), added: b.filter((x) => !a.includes(x)) };
};

/** Who may do something: undefined means everyone; fewer roles (or a list where there was none) is breaking. */
export const diffRoles = (d: DiffCollector, o: unknown, n: unknown, path: PathSegment[], what: string) => {
  d.claim(path);
  if (same(o, n)) return;
  if (o === undefined) return d.add('roles-narrowed', 'new', path, `${what}: now only ${listOf(n).join(', ')}`);
  if (n === undefined) return d.add('roles-widened', 'old', path, `${what}: no longer limited to roles`);
  const { gone, added } = listChange(o, n);
  if (gone.length) d.add('roles-narrowed', 'new', path, `${what}: ${gone.join(', ')} may no longer`);
  if (added.length) d.add('roles-widened', 'new', path, `${what}: ${added.join(', ')} may now`);
};
