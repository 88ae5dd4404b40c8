import { type CheckContext, isRecord } from '../../spec/check-context.ts';
import type { PathSegment } from '../../spec/source-map.ts';
import { suggestion } from '../../spec/validate-shape.ts';
import { checkDerived } from './check-derived.ts';
import { checkFields } from './check-field.ts';
import { checkViews } from './check-views.ts';
import { fieldMap, knownFieldNames, type Raw, resourceMap } from './lookup.ts';

/** Semantic checks of part: resources. */
export const checkResources = (ctx: CheckContext): void => {
  const resources = resourceMap(ctx.spec);
  const names = [...resources.keys()];
  const scope = { ctx, resources: names };
  const byLowerCase = new Map<string, string>();
  for (const [name, resource] of resources) {
    const clash = byLowerCase.get(name.toLowerCase());
    if (clash)
      ctx.report('duplicate-name', ['resources', name], `"${name}" differs from "${clash}" only by case`, 'key');
    else byLowerCase.set(name.toLowerCase(), name);

    checkFields(scope, resource.fields, ['resources', name, 'fields'], true);
    checkIndexes(ctx, name, resource);
    checkSequences(ctx, name, resource);
    checkDerived(ctx, name, resource);
  }
  checkViews(ctx);
};

const checkIndexes = (ctx: CheckContext, name: string, resource: Record<string, unknown>) => {
  if (!Array.isArray(resource.indexes)) return;
  const known = [...knownFieldNames(resource)];
  for (const [i, index] of resource.indexes.entries()) {
    if (!isRecord(index) || !Array.isArray(index.fields)) continue;
    for (const [j, field] of index.fields.entries()) {
      if (typeof field !== 'string' || known.includes(field)) continue;
      ctx.report(
        'unknown-field',
        ['resources', name, 'indexes', i, 'fields', j],
        `${name} has no field "${field}"${suggestion(String(field), known)}`,
      );
    }
  }
};

/** `sequence: <ref field>` on an integer field of the resource itself. */
const checkSequences = (ctx: CheckContext, name: string, resource: Raw) => {
  const fields = fieldMap(resource);
  for (const [fieldName, field] of fields) {
    if (field.sequence === undefined) continue;
    const pointer: PathSegment[] = ['resources', name, 'fields', fieldName, 'sequence'];
    if (field.type !== 'integer')
      ctx.report('invalid-sequence', pointer, `${fieldName} is numbered: make it an integer`);
    const parent = typeof field.sequence === 'string' ? fields.get(field.sequence) : undefined;
    if (parent?.type !== 'ref')
      ctx.report('invalid-sequence', pointer, `"${String(field.sequence)}" is no ref field of ${name}`);
  }
};
