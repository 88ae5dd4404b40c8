import type { FieldPlan, NamedListPlan, RelationPlan } from '../../plan/types.ts';
import type { ServiceSpec } from '../../spec/schema.ts';
import { compileComputed, isComputedProblem } from '../resources/computed-cel.ts';
import { computedScope } from '../resources/computed-scope.ts';
import type { FieldSpec } from '../resources/field-schema.ts';
import { fieldMap, resourceMap } from '../resources/lookup.ts';
import type { ResourceEndpointsSpec } from './schema.ts';

/** The field a distinct list reads, as its values are typed (an array's items). */
export const distinctField = (
  spec: ServiceSpec,
  resource: string,
  field: string,
): Pick<FieldPlan, 'type' | 'spec'> | undefined => {
  const f = fieldMap(resourceMap(spec).get(resource)).get(field) as FieldSpec | undefined;
  if (!f || typeof f.type !== 'string') return undefined;
  if (f.type === 'array') return f.items ? { type: f.items.type, spec: f.items } : undefined;
  return { type: f.type, spec: f };
};

/** A resource's named lists, their CEL compiled to a subquery once (the spec was checked: problems are bugs). */
export const planNamedLists = (spec: ServiceSpec, name: string, entry: ResourceEndpointsSpec | undefined) =>
  Object.entries(entry?.lists ?? {}).map(([listName, l]): NamedListPlan => {
    let filter: NamedListPlan['filter'];
    if (l.filter !== undefined) {
      const query = compileComputed(l.filter, name, 'boolean', computedScope(spec));
      if (isComputedProblem(query)) throw new Error(`${name}.lists.${listName}: ${query.reason}`);
      filter = { cel: l.filter, query };
    }
    const compared = l.distinct !== undefined ? distinctField(spec, name, l.distinct) : undefined;
    return {
      name: listName,
      path: l.path,
      ...(l.summary ? { summary: l.summary } : {}),
      ...(filter ? { filter } : {}),
      ...(l.distinct !== undefined && compared
        ? { distinct: { field: l.distinct, counts: l.counts === true, items: l.items ?? null, compared } }
        : {}),
    };
  });

/** The relation a join resource declares, when it does. */
export const planRelation = (
  spec: ServiceSpec,
  name: string,
  entry: ResourceEndpointsSpec | undefined,
): RelationPlan | undefined => {
  const r = entry?.relation;
  if (!r) return undefined;
  const target = fieldMap(resourceMap(spec).get(name)).get(r.target)?.to;
  return {
    caller: r.caller,
    target: r.target,
    targetResource: typeof target === 'string' ? target : '',
    path: r.path,
    params: [...r.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] ?? ''),
    add: r.add ?? 'POST',
    answer: r.answer ?? 'target',
    ...(r.view ? { view: r.view } : {}),
    ...(r.envelope !== undefined ? { envelope: r.envelope } : {}),
    missing: r.missing ?? 'ok',
  };
};
