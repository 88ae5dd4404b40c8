import type { Plan, ResourcePlan } from '../../plan/types.ts';
import { code, type Inline } from '../docs-model.ts';
import { operationAccess } from './access-docs.ts';

/** The rows of a resource's named lists and relation, in the endpoints table. */
export const relationRows = (plan: Plan, resource: ResourcePlan): Inline[][] => {
  const base = plan.service.basePath;
  const rows: Inline[][] = resource.lists.map((l) => [
    'GET',
    code(`${base}${l.path}`),
    ['list ', code(l.name), ...(l.filter ? [': the records ', code(l.filter.cel), ' keeps'] : [])],
    l.distinct
      ? [code('limit'), ', ', code('offset'), ', ', code('sort'), ' (value or count)']
      : 'list query options below',
    l.distinct
      ? `the distinct values of ${l.distinct.field}${l.distinct.counts ? ', each with its count' : ''}`
      : `a page of ${resource.name}`,
    operationAccess(plan, resource.name, 'list'),
  ]);
  const r = resource.relation;
  if (r) {
    const target = r.targetResource;
    const answer = r.answer === 'none' ? '204, no body' : `${target}${r.view ? ` (${r.view})` : ''}`;
    const what = `the ${resource.name} of the caller (${r.caller}) and this ${target} (${r.target})`;
    rows.push(
      [
        r.add,
        code(`${base}${r.path}`),
        `add ${what}; again: no change`,
        'no body',
        answer,
        operationAccess(plan, resource.name, 'create'),
      ],
      [
        'DELETE',
        code(`${base}${r.path}`),
        `remove it; when there is none: ${r.missing === 'ok' ? 'no change' : '404'}`,
        'no body',
        answer,
        operationAccess(plan, resource.name, 'delete'),
      ],
    );
  }
  return rows;
};

/** The list parameters the spec names, for the list query options. */
export const declaredParamItems = (resource: ResourcePlan): Inline[] =>
  [...resource.list.params.values()].map((p) => [
    code(`${p.name}=`),
    ` — records whose ${p.path} `,
    p.op === 'contains' ? 'has the value as an item' : p.op === 'eq' ? 'equals the value' : `is ${p.op} the value`,
    ...(p.description ? [`: ${p.description}`] : []),
  ]);

/** Whether a resource has list query options to show (its own list, or a named list of records). */
export const hasListOptions = (resource: ResourcePlan): boolean =>
  resource.operations.has('list') || resource.lists.some((l) => !l.distinct);
