import { type CheckContext, isRecord, recordEntries } from '../../spec/check-context.ts';
import type { PathSegment } from '../../spec/source-map.ts';
import { suggestion } from '../../spec/validate-shape.ts';
import { compileComputed, isComputedProblem } from './computed-cel.ts';
import { computedScope } from './computed-plan.ts';
import { fieldMap, knownFieldNames, type Raw, resourceMap } from './lookup.ts';

/** Component names each resource already has in the OpenAPI document: a view named after one would clash. */
const COMPONENT_SUFFIXES = ['Create', 'Patch', 'Page', 'Listed'];

/**
 * Computed fields and views: their CEL compiles to a SQL subquery, their names are free, their fields exist; a
 * reference's `view` and an operation's `view` name a view the resource has.
 */
export const checkViews = (ctx: CheckContext): void => {
  const resources = resourceMap(ctx.spec);
  const scope = computedScope(ctx.spec);
  const checkComputed = (resource: string, entries: Array<[string, Raw]>, at: PathSegment[], taken: Set<string>) => {
    for (const [name, c] of entries) {
      const path = [...at, name];
      if (taken.has(name)) ctx.report('view-name-clash', path, `"${name}" is already a field of ${resource}`, 'key');
      taken.add(name);
      if (typeof c.cel !== 'string' || (c.type !== 'boolean' && c.type !== 'integer')) continue;
      const compiled = compileComputed(c.cel, resource, c.type, scope);
      if (!isComputedProblem(compiled)) continue;
      const code = compiled.kind === 'unknown-name' ? 'unknown-computed-name' : 'computed-not-sql';
      ctx.report(code, [...path, 'cel'], `${resource}.${name}: ${compiled.reason}`, {
        offset: compiled.offset ?? 0,
      });
    }
  };
  for (const [name, resource] of resources) {
    const known = knownFieldNames(resource);
    const computed = recordEntries<Raw>(resource.computed);
    checkComputed(name, computed, ['resources', name, 'computed'], new Set(known));
    const shown = new Set([...known, ...computed.map(([n]) => n)]);
    for (const [viewName, view] of recordEntries<Raw>(resource.views)) {
      const path: PathSegment[] = ['resources', name, 'views', viewName];
      const component = `${name}${viewName}`;
      if (resources.has(component) || COMPONENT_SUFFIXES.includes(viewName))
        ctx.report('view-name-clash', path, `the view's schema ${component} would clash with another schema`, 'key');
      const fields = Array.isArray(view.fields) ? view.fields : [];
      for (const [i, field] of fields.entries()) {
        if (typeof field !== 'string' || shown.has(field)) continue;
        ctx.report(
          'unknown-view-field',
          [...path, 'fields', i],
          `${name} has no field "${field}"${suggestion(field, [...shown])}`,
        );
      }
      const own = recordEntries<Raw>(view.computed);
      checkComputed(name, own, [...path, 'computed'], new Set(fields.filter((f) => typeof f === 'string')));
    }
    for (const [fieldName, field] of fieldMap(resource)) {
      if (typeof field.view !== 'string') continue;
      const at = ['resources', name, 'fields', fieldName, 'view'];
      if (field.type !== 'ref') {
        ctx.report('constraint-type-mismatch', at, `view applies to ref fields only; ${fieldName} is a ${field.type}`);
        continue;
      }
      const target = typeof field.to === 'string' ? resources.get(field.to) : undefined;
      if (target) reportUnknownView(ctx, at, String(field.to), target, field.view);
    }
  }
  for (const [name, entry] of Object.entries(isRecord(ctx.spec.endpoints) ? ctx.spec.endpoints : {})) {
    const resource = resources.get(name);
    if (!resource || !isRecord(entry)) continue;
    for (const [op, override] of recordEntries<Raw>(entry.overrides)) {
      if (typeof override.view !== 'string') continue;
      const at = ['endpoints', name, 'overrides', op, 'view'];
      if (op === 'delete') ctx.report('unknown-view', at, 'delete answers no record: it has no view');
      else reportUnknownView(ctx, at, name, resource, override.view);
    }
  }
};

const reportUnknownView = (ctx: CheckContext, at: PathSegment[], resource: string, target: Raw, view: string) => {
  const views = recordEntries<Raw>(target.views).map(([n]) => n);
  if (!views.includes(view))
    ctx.report('unknown-view', at, `${resource} has no view "${view}"${suggestion(view, views)}`);
};
