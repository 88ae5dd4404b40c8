import type { FieldPlan, ListParamPlan } from '../../plan/types.ts';
import type { ServiceSpec } from '../../spec/schema.ts';
import type { RelatedCondition, RelatedTerm } from '../../storage/index.ts';
import type { FieldSpec } from '../resources/field-schema.ts';
import { fieldMap, resourceMap, stateFieldOf } from '../resources/lookup.ts';
import type { ListParamSpec } from './relation-schema.ts';

type Compared = Pick<FieldPlan, 'type' | 'spec'>;
type CompareOp = 'eq' | 'ne' | 'lt' | 'lte' | 'gt' | 'gte';

const SYSTEM: Readonly<Record<string, Compared>> = {
  id: { type: 'string', spec: { type: 'string' } },
  createdAt: { type: 'datetime', spec: { type: 'datetime' } },
  updatedAt: { type: 'datetime', spec: { type: 'datetime' } },
};
/** Types a list parameter may compare in SQL (as computed fields do), and arrays by membership. */
const COMPARABLE = new Set(['string', 'integer', 'number', 'boolean', 'enum', 'ref', 'date', 'datetime', 'email']);

/** Why a list parameter cannot be served: which part of it is wrong, and why. */
export interface ListParamProblem {
  readonly at: 'field' | 'join' | 'on' | 'op';
  readonly kind: 'unknown' | 'not-sql';
  readonly message: string;
}

/** A field of a resource as a list parameter compares it (system fields and the state field included). */
const fieldOf = (spec: ServiceSpec, resource: string, name: string): Compared | undefined => {
  const r = resourceMap(spec).get(resource);
  if (!r) return undefined;
  if (SYSTEM[name]) return SYSTEM[name];
  if (name === stateFieldOf(r)) return { type: 'enum', spec: { type: 'enum' } as FieldSpec };
  const f = fieldMap(r).get(name) as FieldSpec | undefined;
  return f && typeof f.type === 'string' ? { type: f.type, spec: f } : undefined;
};

const refsTo = (spec: ServiceSpec, resource: string, target: string): string[] =>
  [...fieldMap(resourceMap(spec).get(resource)).entries()]
    .filter(([, f]) => f.type === 'ref' && f.to === target)
    .map(([n]) => n);

/** The terms that compare `path` (a field, or refs then a field) of `resource` with the value. */
const walk = (
  spec: ServiceSpec,
  resource: string,
  path: readonly string[],
  op: ListParamPlan['op'] | undefined,
): { terms: (value: unknown) => RelatedTerm[]; compared: Compared; op: ListParamPlan['op'] } | ListParamProblem => {
  const [head = '', ...tail] = path;
  const field = fieldOf(spec, resource, head);
  if (!field) return { at: 'field', kind: 'unknown', message: `${resource} has no field "${head}"` };
  if (tail.length > 0) {
    const to = field.type === 'ref' ? field.spec.to : undefined;
    if (!to || !resourceMap(spec).has(to))
      return {
        at: 'field',
        kind: 'unknown',
        message: `${resource}.${head} is not a reference, so it has no "${tail[0]}"`,
      };
    const inner = walk(spec, to, tail, op);
    if ('at' in inner) return inner;
    return {
      ...inner,
      terms: (value) => [
        { related: { from: to, terms: [{ field: 'id', op: 'eq', outer: head }, ...inner.terms(value)] } },
      ],
    };
  }
  const array = field.type === 'array';
  const chosen = op ?? (array ? 'contains' : 'eq');
  if (array !== (chosen === 'contains'))
    return {
      at: 'op',
      kind: 'not-sql',
      message: array
        ? `${resource}.${head} is an array: compare it with contains`
        : `contains compares arrays, and ${resource}.${head} is a ${field.type}`,
    };
  if (array ? !COMPARABLE.has(field.spec.items?.type ?? '') : !COMPARABLE.has(field.type))
    return { at: 'field', kind: 'not-sql', message: `${resource}.${head} (${field.type}) does not compare in SQL` };
  // An array's own normalisers apply to each of its items.
  const items = field.spec.items;
  const compared =
    array && items
      ? {
          type: items.type,
          spec: { ...items, normalize: [...(field.spec.normalize ?? []), ...(items.normalize ?? [])] },
        }
      : field;
  return {
    compared,
    op: chosen,
    terms: (value) => [
      chosen === 'contains' ? { field: head, op: 'contains', value } : { field: head, op: chosen as CompareOp, value },
    ],
  };
};

/**
 * Compiles a declared list parameter of `resource` once: a plain filter on its own field, or a condition through
 * references (`author.username`) or a join resource (`join: Favorite, field: user.username`). Checks use it too.
 */
export const resolveListParam = (
  spec: ServiceSpec,
  resource: string,
  name: string,
  p: ListParamSpec,
): ListParamPlan | ListParamProblem => {
  const path = p.field.split('.');
  const base = { name, ...(p.description ? { description: p.description } : {}) };
  if (p.join === undefined) {
    const found = walk(spec, resource, path, p.op);
    if ('at' in found) return found;
    if (path.length === 1) return { ...base, path: p.field, compared: found.compared, op: found.op, own: p.field };
    const condition = (value: unknown): RelatedCondition => {
      const [term] = found.terms(value);
      return (term as { related: RelatedCondition }).related;
    };
    return { ...base, path: p.field, compared: found.compared, op: found.op, related: condition };
  }
  const join = p.join;
  if (!resourceMap(spec).has(join)) return { at: 'join', kind: 'unknown', message: `there is no resource "${join}"` };
  const links = refsTo(spec, join, resource);
  const on = p.on ?? (links.length === 1 ? links[0] : undefined);
  if (on === undefined)
    return {
      at: p.on === undefined ? 'join' : 'on',
      kind: 'unknown',
      message: links.length
        ? `${join} refers to ${resource} through ${links.join(', ')}: name one with on`
        : `${join} has no reference to ${resource}`,
    };
  if (!links.includes(on))
    return { at: 'on', kind: 'unknown', message: `${join}.${on} is not a reference to ${resource}` };
  const found = walk(spec, join, path, p.op);
  if ('at' in found) return found;
  return {
    ...base,
    path: `${join}.${p.field}`,
    compared: found.compared,
    op: found.op,
    related: (value) => ({ from: join, terms: [{ field: on, op: 'eq', outer: 'id' }, ...found.terms(value)] }),
  };
};

export const isListParamProblem = (v: ListParamPlan | ListParamProblem): v is ListParamProblem =>
  'kind' in v && 'at' in v;
