export { computedScope } from './computed-scope.ts';

import type { ComputedFieldPlan, Operation, ViewPlan } from '../../plan/types.ts';
import type { ServiceSpec } from '../../spec/schema.ts';
import { resourceEndpointsSpec } from '../endpoints/plan.ts';
import { type ComputedScope, compileComputed, isComputedProblem } from './computed-cel.ts';
import { computedScope } from './computed-scope.ts';
import { tallyOf } from './computed-tally.ts';
import { fieldMap, resourceMap } from './lookup.ts';
import type { ResourceSpec } from './schema.ts';
import type { ComputedSpec } from './view-schema.ts';

const SYSTEM_FIELDS = new Set(['id', 'createdAt', 'updatedAt']);

const planOne = (
  spec: ServiceSpec,
  scope: ComputedScope,
  resource: string,
  name: string,
  c: ComputedSpec,
): ComputedFieldPlan => {
  const query = compileComputed(c.cel, resource, c.type, scope);
  // The spec was checked: a problem here is a bug in the checker, not the user's.
  if (isComputedProblem(query)) throw new Error(`${resource}.computed.${name}: ${query.reason}`);
  const fields = fieldMap(resourceMap(spec).get(query.from));
  const required = (field: string) => SYSTEM_FIELDS.has(field) || fields.get(field)?.required === true;
  const tally = tallyOf(resource, query, required);
  return {
    name,
    type: c.type,
    cel: c.cel,
    ...(c.description ? { description: c.description } : {}),
    query,
    ...(tally ? { tally } : {}),
  };
};

/** A resource's computed fields and views, compiled once (their CEL to subquery plans). */
export const planComputedAndViews = (
  spec: ServiceSpec,
  name: string,
  resource: ResourceSpec,
): {
  computed: ComputedFieldPlan[];
  views: Map<string, ViewPlan>;
  answerViews: Partial<Record<Operation, string>>;
} => {
  const scope = computedScope(spec);
  const computed = Object.entries(resource.computed ?? {}).map(([n, c]) => planOne(spec, scope, name, n, c));
  const byName = new Map(computed.map((c) => [c.name, c]));
  const views = new Map(
    Object.entries(resource.views ?? {}).map(([viewName, v]): [string, ViewPlan] => {
      const own = Object.entries(v.computed ?? {}).map(([n, c]) => planOne(spec, scope, name, n, c));
      const shown = [...v.fields.flatMap((f) => byName.get(f) ?? []), ...own];
      return [
        viewName,
        {
          name: viewName,
          ...(v.description ? { description: v.description } : {}),
          fields: v.fields.filter((f) => !byName.has(f)),
          computed: shown,
        },
      ];
    }),
  );
  const overrides = resourceEndpointsSpec(spec, name)?.overrides ?? {};
  const answerViews = Object.fromEntries(
    Object.entries(overrides).flatMap(([op, o]) => (o?.view ? [[op, o.view]] : [])),
  ) as Partial<Record<Operation, string>>;
  return { computed, views, answerViews };
};
