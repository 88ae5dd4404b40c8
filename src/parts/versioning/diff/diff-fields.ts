import type { PathSegment } from '../../../spec/source-map.ts';
import { type DiffCollector, diffRoles, listChange, type Rec, recOf, same } from './diff-collector.ts';
import type { DiffRule } from './diff-rules.ts';

/** Which way a field map's values travel: inputs (bodies, params), answers (responses, payloads), or both (records). */
export type Direction = 'in' | 'out' | 'both';

/** A resource's own fields: changes to them can be covered by a version's change, and renames are known. */
export interface FieldOwner {
  readonly resource: string;
  /** New name → old name, for the renames new versions declare. */
  readonly renames: ReadonlyMap<string, string>;
}

const UPPER = ['maxLength', 'max', 'maxItems', 'precision', 'scale'];
const LOWER = ['minLength', 'min', 'minItems'];
const NARROWING = ['pattern', 'format', 'unique', 'uniqueItems'];
const DOCS = ['description', 'example'];
const HANDLED = new Set([
  ...UPPER,
  ...LOWER,
  ...NARROWING,
  ...DOCS,
  'type',
  'to',
  'values',
  'required',
  'nullable',
  'readOnly',
  'writeOnly',
  'default',
  'readableBy',
  'writableBy',
  'items',
  'fields',
]);

const flag = (v: unknown) => v === true;

/** Whether a constraint moved so that a value valid before may be refused now. */
const tightened = (key: string, o: unknown, n: unknown): boolean => {
  if (n === undefined || n === false) return false;
  if (UPPER.includes(key)) return o === undefined || (n as number) < (o as number);
  if (LOWER.includes(key)) return o === undefined || (n as number) > (o as number);
  return true; // a pattern, format or uniqueness that is new or different
};

/** Compares two definitions of one field. */
export const diffField = (
  d: DiffCollector,
  o: Rec,
  n: Rec,
  path: PathSegment[],
  label: string,
  dir: Direction,
  owner?: FieldOwner,
) => {
  d.claim(path);
  const at = (key: string) => [...path, key];
  const input = dir !== 'out';
  const output = dir !== 'in';
  const add = (rule: DiffRule, key: string, message: string) =>
    d.add(rule, n[key] === undefined ? 'old' : 'new', n[key] === undefined ? path : at(key), `${label}: ${message}`);
  if (o.type !== n.type || o.to !== n.to) {
    const was = o.type === 'ref' ? `ref to ${o.to}` : o.type;
    const now = n.type === 'ref' ? `ref to ${n.to}` : n.type;
    const subject = owner
      ? { resource: owner.resource, kind: 'retype' as const, field: String(path.at(-1)) }
      : undefined;
    d.add('type-changed', 'new', at('type'), `${label}: type ${String(was)} → ${String(now)}`, subject);
    return; // constraints of another type do not compare
  }
  for (const key of [...UPPER, ...LOWER, ...NARROWING]) {
    if (same(o[key], n[key])) continue;
    const what = `${key} ${o[key] === undefined ? '(none)' : JSON.stringify(o[key])} → ${n[key] === undefined ? '(none)' : JSON.stringify(n[key])}`;
    if (tightened(key, o[key], n[key]) && input) add('constraint-tightened', key, what);
    else add('field-loosened', key, output && !input ? `${what} (answers only)` : what);
  }
  for (const key of DOCS) if (!same(o[key], n[key])) add('docs-changed', key, `${key} changed`);
  if (!same(o.values, n.values)) {
    const { gone, added } = listChange(o.values, n.values);
    if (gone.length)
      add(input ? 'enum-value-removed' : 'field-loosened', 'values', `values ${gone.join(', ')} removed`);
    if (added.length) add('enum-value-added', 'values', `values ${added.join(', ')} added`);
  }
  if (flag(o.required) !== flag(n.required)) {
    if (flag(n.required)) add(input ? 'field-made-required' : 'field-loosened', 'required', 'now required');
    else add(output ? 'field-made-optional' : 'field-loosened', 'required', 'no longer required');
  }
  if (flag(o.nullable) !== flag(n.nullable)) {
    if (flag(n.nullable)) add(output ? 'field-made-nullable' : 'field-loosened', 'nullable', 'may now be null');
    else add(input ? 'constraint-tightened' : 'field-loosened', 'nullable', 'may no longer be null');
  }
  if (flag(o.readOnly) !== flag(n.readOnly))
    add(
      flag(n.readOnly) && input ? 'field-made-read-only' : 'field-loosened',
      'readOnly',
      `readOnly ${flag(n.readOnly)}`,
    );
  if (flag(o.writeOnly) !== flag(n.writeOnly))
    add(flag(n.writeOnly) && output ? 'field-hidden' : 'field-added', 'writeOnly', `writeOnly ${flag(n.writeOnly)}`);
  if (!same(o.default, n.default))
    add('default-changed', 'default', `default ${JSON.stringify(o.default)} → ${JSON.stringify(n.default)}`);
  for (const key of ['readableBy', 'writableBy']) diffRoles(d, o[key], n[key], at(key), `${label} ${key}`);
  if (o.items !== undefined || n.items !== undefined)
    diffField(d, recOf(o.items), recOf(n.items), at('items'), `${label}[]`, dir);
  if (o.fields !== undefined || n.fields !== undefined) diffFields(d, o.fields, n.fields, at('fields'), label, dir);
  for (const key of new Set([...Object.keys(o), ...Object.keys(n)]))
    if (!HANDLED.has(key) && !same(o[key], n[key])) add('field-changed', key, `${key} changed`);
};

/** Compares two field maps: fields gone, new (a required input is breaking), renamed, and changed. */
export const diffFields = (
  d: DiffCollector,
  o: unknown,
  n: unknown,
  path: PathSegment[],
  label: string,
  dir: Direction,
  owner?: FieldOwner,
) => {
  d.claim(path);
  const before = recOf(o);
  const after = recOf(n);
  const renamed = new Set<string>();
  for (const [name, def] of Object.entries(after)) {
    const from = owner?.renames.get(name);
    if (name in before || from === undefined || !(from in before) || from in after) continue;
    renamed.add(from);
    d.add('field-renamed', 'new', [...path, name], `${label}.${from} renamed to ${name}`, {
      resource: owner?.resource as string,
      kind: 'rename',
      field: `${from}>${name}`,
    });
    diffField(d, recOf(before[from]), recOf(def), [...path, name], `${label}.${name}`, dir, owner);
  }
  for (const name of Object.keys(before)) {
    if (name in after || renamed.has(name)) continue;
    const subject = owner ? { resource: owner.resource, kind: 'remove' as const, field: name } : undefined;
    d.add('field-removed', 'old', [...path, name], `${label}.${name} removed`, subject);
  }
  for (const [name, raw] of Object.entries(after)) {
    if (name in before) {
      diffField(d, recOf(before[name]), recOf(raw), [...path, name], `${label}.${name}`, dir, owner);
      continue;
    }
    if (owner?.renames.has(name) && renamed.has(owner.renames.get(name) as string)) continue;
    const def = recOf(raw);
    const required = dir !== 'out' && flag(def.required) && def.default === undefined && !flag(def.readOnly);
    const subject = owner ? { resource: owner.resource, kind: 'add' as const, field: name } : undefined;
    d.add(
      required ? 'required-field-added' : 'field-added',
      'new',
      [...path, name],
      `${label}.${name} added${required ? ' (required)' : ''}`,
      subject,
    );
  }
};
