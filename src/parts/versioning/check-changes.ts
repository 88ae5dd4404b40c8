import { type CheckContext, isRecord } from '../../spec/check-context.ts';
import type { PathSegment } from '../../spec/source-map.ts';
import { suggestion } from '../../spec/validate-shape.ts';
import { knownEventNames } from '../events/event-names.ts';
import { checkField } from '../resources/check-field.ts';
import { fieldMap, type Raw, resourceMap, transitionMap } from '../resources/lookup.ts';
import { checkRouteChanges } from './check-routes.ts';

/** The change kinds about one resource's fields, each needing `resource`. */
const FIELD_KINDS = ['rename', 'add', 'remove', 'retype', 'require', 'enum-add', 'move', 'transform'];
const KINDS = [
  ...FIELD_KINDS,
  'add-operation',
  'remove-operation',
  'add-transition',
  'remove-transition',
  'add-event',
  'remove-event',
  'error',
];

/**
 * Changes are replayed from the newest version back to the oldest, so each is checked against the fields as they
 * were at its version: a rename's `to` exists then and its `from` does not, an added field exists, a removed one not.
 */
export const checkChanges = (ctx: CheckContext, versions: readonly unknown[]) => {
  const resources = resourceMap(ctx.spec);
  const names = [...resources.keys()];
  const fieldsAt = new Map([...resources].map(([name, r]) => [name, new Set(fieldMap(r).keys())]));
  const scope = { ctx, resources: names };
  const events = knownEventNames(ctx.spec);
  for (let v = versions.length - 1; v >= 0; v--) {
    const version = versions[v];
    if (!isRecord(version) || !Array.isArray(version.changes)) continue;
    for (const [c, change] of version.changes.entries()) {
      if (!isRecord(change)) continue;
      const path: PathSegment[] = ['versioning', 'versions', v, 'changes', c];
      const kinds = KINDS.filter((k) => change[k] !== undefined);
      if (kinds.length === 0)
        ctx.report('invalid-change', path, `a change must say what changed: one of ${KINDS.join(', ')}`);
      checkRouteChanges(ctx, change, path, events);
      const needsResource = kinds.some((k) => FIELD_KINDS.includes(k) || k.endsWith('-transition'));
      if (typeof change.resource !== 'string') {
        if (needsResource) ctx.report('invalid-change', path, `${kinds.join(', ')} needs a resource`);
        continue;
      }
      const resource = resources.get(change.resource);
      const fields = fieldsAt.get(change.resource);
      if (!resource || !fields) {
        const hint = suggestion(change.resource, names);
        ctx.report('unknown-change-field', [...path, 'resource'], `no resource "${change.resource}"${hint}`);
        continue;
      }
      const expect = (field: unknown, exists: boolean, at: PathSegment[]) => {
        if (typeof field !== 'string' || fields.has(field) === exists) return;
        const why = exists ? `has no field "${field}" at this version` : `still has a field "${field}" at this version`;
        ctx.report('unknown-change-field', at, `${change.resource} ${why}`);
      };
      const rename = isRecord(change.rename) ? change.rename : {};
      expect(rename.to, true, [...path, 'rename', 'to']);
      expect(rename.from, false, [...path, 'rename', 'from']);
      expect(change.add, true, [...path, 'add']);
      expect(change.remove, false, [...path, 'remove']);
      expect(change.require, true, [...path, 'require']);
      const retype = isRecord(change.retype) ? change.retype : {};
      expect(retype.field, true, [...path, 'retype', 'field']);
      if (isRecord(retype.from)) checkField(scope, retype.from, [...path, 'retype', 'from'], String(retype.field));
      checkEnumAdd(ctx, resource, change, path, fields);
      const move = isRecord(change.move) ? change.move : {};
      expect(move.from, false, [...path, 'move', 'from']);
      checkMove(ctx, resource, move, [...path, 'move', 'to']);
      for (const kind of ['add-transition', 'remove-transition']) {
        const name = change[kind];
        const transitions = [...transitionMap(resource).keys()];
        if (typeof name === 'string' && !transitions.includes(name))
          ctx.report(
            'unknown-change-target',
            [...path, kind],
            `${change.resource} has no transition "${name}"${suggestion(name, transitions)}`,
          );
      }
      if (change.covers !== undefined && change.transform === undefined)
        ctx.report('invalid-change', [...path, 'covers'], 'covers goes with a transform, which makes the break safe');
      // Step back to the fields as they were before this version.
      if (typeof rename.to === 'string' && typeof rename.from === 'string') {
        fields.delete(rename.to);
        fields.add(rename.from);
      }
      if (typeof change.add === 'string') fields.delete(change.add);
      if (typeof change.remove === 'string') fields.add(change.remove);
      if (typeof move.from === 'string') fields.add(move.from);
    }
  }
};

/** `enum-add`: an enum field of the resource that holds the values now; the fallback one of the others. */
const checkEnumAdd = (ctx: CheckContext, resource: Raw, change: Raw, path: PathSegment[], fields: Set<string>) => {
  const e = isRecord(change['enum-add']) ? change['enum-add'] : undefined;
  if (!e || typeof e.field !== 'string') return;
  const at: PathSegment[] = [...path, 'enum-add'];
  const field = fieldMap(resource).get(e.field);
  if (!fields.has(e.field) || !field || field.type !== 'enum') {
    ctx.report('unknown-change-field', [...at, 'field'], `${String(change.resource)} has no enum field "${e.field}"`);
    return;
  }
  const values = Array.isArray(field.values) ? field.values.map(String) : [];
  const added = Array.isArray(e.values) ? e.values.map(String) : [];
  for (const [i, value] of added.entries())
    if (!values.includes(value))
      ctx.report('invalid-change', [...at, 'values', i], `"${value}" is not a value of ${e.field}`);
  if (typeof e.fallback === 'string' && (!values.includes(e.fallback) || added.includes(e.fallback)))
    ctx.report('invalid-change', [...at, 'fallback'], `the fallback must be a value older versions have`);
};

/** `move.to`: `object.field`, a field of an object field of the resource. */
const checkMove = (ctx: CheckContext, resource: Raw, move: Raw, at: PathSegment[]) => {
  if (typeof move.to !== 'string') return;
  const [parent = '', child = '', ...more] = move.to.split('.');
  const holder = fieldMap(resource).get(parent);
  const inner = holder && isRecord(holder.fields) ? holder.fields : undefined;
  if (more.length || !inner || !(child in inner))
    ctx.report('unknown-change-field', at, `"${move.to}" is not a field of an object field (object.field)`);
};
