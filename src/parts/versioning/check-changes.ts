import { type CheckContext, isRecord } from '../../spec/check-context.ts';
import type { PathSegment } from '../../spec/source-map.ts';
import { suggestion } from '../../spec/validate-shape.ts';
import { checkField } from '../resources/check-field.ts';
import { fieldMap, resourceMap } from '../resources/lookup.ts';

/**
 * Changes are replayed from the newest version back to the oldest, so each is checked against the fields as they
 * were at its version: a rename's `to` exists then and its `from` does not, an added field exists, a removed one not.
 */
export const checkChanges = (ctx: CheckContext, versions: readonly unknown[]) => {
  const resources = resourceMap(ctx.spec);
  const names = [...resources.keys()];
  const fieldsAt = new Map([...resources].map(([name, r]) => [name, new Set(fieldMap(r).keys())]));
  const scope = { ctx, resources: names };
  for (let v = versions.length - 1; v >= 0; v--) {
    const version = versions[v];
    if (!isRecord(version) || !Array.isArray(version.changes)) continue;
    for (const [c, change] of version.changes.entries()) {
      if (!isRecord(change) || typeof change.resource !== 'string') continue;
      const path: PathSegment[] = ['versioning', 'versions', v, 'changes', c];
      const fields = fieldsAt.get(change.resource);
      if (!fields) {
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
      const retype = isRecord(change.retype) ? change.retype : {};
      expect(retype.field, true, [...path, 'retype', 'field']);
      if (isRecord(retype.from)) checkField(scope, retype.from, [...path, 'retype', 'from'], String(retype.field));
      // Step back to the fields as they were before this version.
      if (typeof rename.to === 'string' && typeof rename.from === 'string') {
        fields.delete(rename.to);
        fields.add(rename.from);
      }
      if (typeof change.add === 'string') fields.delete(change.add);
      if (typeof change.remove === 'string') fields.add(change.remove);
    }
  }
};
