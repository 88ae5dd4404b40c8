import type { PathSegment } from '../../../spec/source-map.ts';
import { type DiffCollector, diffRoles, eachKey, listChange, listOf, recOf, same } from './diff-collector.ts';
import { diffFields } from './diff-fields.ts';

const arrayOf = (v: unknown): string[] => (v === undefined ? [] : Array.isArray(v) ? v.map(String) : [String(v)]);

const diffTransition = (d: DiffCollector, o: unknown, n: unknown, path: PathSegment[], label: string) => {
  const a = recOf(o);
  const b = recOf(n);
  d.claim(path);
  const at = (k: string) => [...path, k];
  const { gone, added } = listChange(arrayOf(a.from), arrayOf(b.from));
  if (gone.length) d.add('transition-changed', 'new', at('from'), `${label}: no longer from ${gone.join(', ')}`);
  if (added.length) d.add('transition-added', 'new', at('from'), `${label}: now also from ${added.join(', ')}`);
  if (a.to !== b.to) d.add('transition-changed', 'new', at('to'), `${label}: goes to ${b.to} (was ${a.to})`);
  if (a.when !== b.when) {
    if (b.when === undefined) d.add('transition-added', 'old', at('when'), `${label}: its guard is removed`);
    else d.add('guard-changed', 'new', at('when'), `${label}: guard ${a.when === undefined ? 'added' : 'changed'}`);
  }
  if (!same(a.after, b.after)) d.add('behaviour-changed', 'new', at('after'), `${label}: timer changed`);
  if (a.path !== b.path || a.event !== b.event)
    d.add(a.path !== b.path ? 'path-changed' : 'event-removed', 'new', path, `${label}: path or event name changed`);
  if (a.description !== b.description) d.add('docs-changed', 'new', at('description'), `${label}: description`);
  diffRoles(d, a.roles, b.roles, at('roles'), `${label} roles`);
  diffFields(d, a.input, b.input, at('input'), `${label} input`, 'in');
};

/** A resource's life cycle: states, final states, editable fields and transitions. */
const diffStates = (d: DiffCollector, o: unknown, n: unknown, path: PathSegment[], name: string) => {
  d.claim(path);
  if (same(o, n)) return;
  if (o === undefined || n === undefined) {
    d.add('behaviour-changed', n ? 'new' : 'old', path, `${name}: life cycle ${n ? 'added' : 'removed'}`);
    return;
  }
  const a = recOf(o);
  const b = recOf(n);
  const at = (...k: PathSegment[]) => [...path, ...k];
  if (a.field !== b.field) d.add('behaviour-changed', 'new', at('field'), `${name}: state field changed`);
  if (a.initial !== b.initial) d.add('behaviour-changed', 'new', at('initial'), `${name}: starts in ${b.initial}`);
  eachKey(a.states, b.states, {
    removed: (s) => d.add('enum-value-removed', 'old', at('states', s), `${name}: state ${s} removed`),
    added: (s) => d.add('enum-value-added', 'new', at('states', s), `${name}: state ${s} added`),
    both: (s) => {
      const x = recOf(recOf(a.states)[s]);
      const y = recOf(recOf(b.states)[s]);
      if (x.description !== y.description) d.add('docs-changed', 'new', at('states', s), `${name}: state ${s}`);
      if (!same(x.final, y.final) || !same(x.editable, y.editable))
        d.add('behaviour-changed', 'new', at('states', s), `${name}: state ${s} final or editable changed`);
    },
  });
  const final = listChange(a.final, b.final);
  if (final.added.length)
    d.add('behaviour-changed', 'new', at('final'), `${name}: ${final.added.join(', ')} now final`);
  if (final.gone.length)
    d.add('transition-added', 'new', at('final'), `${name}: ${final.gone.join(', ')} no longer final`);
  const ea = recOf(a.editable);
  const eb = recOf(b.editable);
  for (const s of new Set([...Object.keys(ea), ...Object.keys(eb)])) {
    if (same(ea[s], eb[s])) continue;
    if (ea[s] === undefined || eb[s] === undefined) {
      d.add('behaviour-changed', 'new', at('editable', s), `${name}: editable fields in ${s} changed`);
      continue;
    }
    const { gone, added } = listChange(ea[s], eb[s]);
    if (gone.length)
      d.add(
        'constraint-tightened',
        'new',
        at('editable', s),
        `${name}: in ${s}, ${gone.join(', ')} no longer editable`,
      );
    if (added.length)
      d.add('field-loosened', 'new', at('editable', s), `${name}: in ${s}, ${added.join(', ')} editable`);
  }
  eachKey(a.transitions, b.transitions, {
    removed: (t) => d.add('transition-removed', 'old', at('transitions', t), `${name}: transition ${t} removed`),
    added: (t) => d.add('transition-added', 'new', at('transitions', t), `${name}: transition ${t} added`),
    both: (t) =>
      diffTransition(
        d,
        recOf(a.transitions)[t],
        recOf(b.transitions)[t],
        at('transitions', t),
        `${name} transition ${t}`,
      ),
  });
};

/** Named extras of a resource (computed fields, views): gone is breaking, new is safe, changed is breaking. */
const diffNamed = (d: DiffCollector, o: unknown, n: unknown, path: PathSegment[], label: string) => {
  d.claim(path);
  eachKey(o, n, {
    removed: (k) => d.add('field-removed', 'old', [...path, k], `${label} ${k} removed`),
    added: (k) => d.add('field-added', 'new', [...path, k], `${label} ${k} added`),
    both: (k) => {
      if (!same(recOf(o)[k], recOf(n)[k])) d.add('field-changed', 'new', [...path, k], `${label} ${k} changed`);
    },
  });
};

const diffResource = (
  d: DiffCollector,
  name: string,
  o: Record<string, unknown>,
  n: Record<string, unknown>,
  renames: ReadonlyMap<string, string>,
) => {
  const path = ['resources', name];
  const at = (k: string) => [...path, k];
  diffFields(d, o.fields, n.fields, at('fields'), name, 'both', { resource: name, renames });
  diffNamed(d, o.computed, n.computed, at('computed'), `${name} computed field`);
  diffNamed(d, o.views, n.views, at('views'), `${name} view`);
  diffStates(d, o.states, n.states, at('states'), name);
  for (const key of ['description', 'indexes', 'idPrefix', 'id', 'plural', 'unique']) d.claim(at(key));
  if (!same(o.description, n.description) || !same(o.indexes, n.indexes))
    d.add('docs-changed', 'new', path, `${name}: description or indexes changed`);
  if (o.idPrefix !== n.idPrefix)
    d.add('id-changed', 'new', at('idPrefix'), `${name}: ids start ${String(n.idPrefix ?? '(default)')}_`);
  if (o.id !== n.id) d.add('type-changed', 'new', at('id'), `${name}: id style ${o.id ?? 'ulid'} → ${n.id ?? 'ulid'}`);
  if (o.plural !== n.plural) d.add('path-changed', 'new', at('plural'), `${name}: plural (and collection path)`);
  const keys = (v: unknown) => listOf(v).map((k) => JSON.stringify(k));
  const { gone, added } = listChange(keys(o.unique), keys(n.unique));
  if (added.length) d.add('constraint-tightened', 'new', at('unique'), `${name}: new unique key ${added.join(', ')}`);
  if (gone.length) d.add('field-loosened', 'old', at('unique'), `${name}: unique key ${gone.join(', ')} dropped`);
};

/** Part 2 (and 3): resources, their fields and life cycles. */
export const diffResources = (
  d: DiffCollector,
  o: unknown,
  n: unknown,
  renamesOf: (resource: string) => ReadonlyMap<string, string>,
) => {
  d.claim(['resources']);
  eachKey(o, n, {
    removed: (k) => d.add('resource-removed', 'old', ['resources', k], `resource ${k} removed`),
    added: (k) => d.add('resource-added', 'new', ['resources', k], `resource ${k} added`),
    both: (k) => diffResource(d, k, recOf(recOf(o)[k]), recOf(recOf(n)[k]), renamesOf(k)),
  });
};
