import type { NamedListPlan, Plan, ResourcePlan } from '../../plan/types.ts';
import { errorResponses } from '../errors/openapi.ts';
import { type OpenApiObject, ref, success } from '../openapi-model.ts';
import { exampleValue } from '../resources/example.ts';
import { pluralize } from '../resources/naming.ts';
import { answerOf, exampleView, viewComponentName } from '../resources/view-openapi.ts';
import { valueSchema } from './filter-openapi.ts';
import { routeParameters } from './path-openapi.ts';

type PathItem = Record<string, OpenApiObject>;

const LIST_ERRORS = ['invalid_query', 'invalid_filter', 'invalid_sort', 'limit_exceeded', 'internal', 'busy'];
const capital = (s: string) => `${s.slice(0, 1).toUpperCase()}${s.slice(1)}`;

/** The list parameters the spec names itself (`?author=`, `?favorited=`, `?tag=`). */
export const declaredParameters = (resource: ResourcePlan): OpenApiObject[] =>
  [...resource.list.params.values()].map((p) => ({
    name: p.name,
    in: 'query',
    description:
      p.description ??
      (p.op === 'contains'
        ? `Only records whose ${p.path} has the value as an item.`
        : `Only records whose ${p.path} ${p.op === 'eq' ? 'equals' : `is ${p.op}`} the value.`),
    schema: valueSchema(p.compared),
  }));

/** A distinct list: `limit`, `offset`, `sort` and the values in their member. */
const distinctOperation = (plan: Plan, resource: ResourcePlan, named: NamedListPlan): OpenApiObject => {
  const distinct = named.distinct as NonNullable<NamedListPlan['distinct']>;
  const value = valueSchema(distinct.compared);
  const item = distinct.counts
    ? {
        type: 'object',
        properties: { value, count: { type: 'integer', minimum: 1 } },
        required: ['value', 'count'],
      }
    : value;
  const member = distinct.items ?? resource.wire.list.items;
  const values = { type: 'array', items: item };
  const sample = exampleValue(distinct.compared.spec, distinct.field, 'output', plan.resourcesByName);
  const one = distinct.counts ? { value: sample, count: 1 } : sample;
  const sorts = distinct.counts ? ['value', '-value', 'count', '-count'] : ['value', '-value'];
  return {
    operationId: `list${resource.name}${capital(named.name)}`,
    summary: named.summary ?? `The distinct ${distinct.field} of ${pluralize(resource.name)}`,
    tags: [resource.name],
    parameters: [
      { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: resource.list.pageSize.max } },
      { name: 'offset', in: 'query', schema: { type: 'integer', minimum: 0, maximum: 1_000_000, default: 0 } },
      { name: 'sort', in: 'query', schema: { type: 'string', enum: sorts, default: 'value' } },
    ],
    responses: {
      '200': success(
        `The distinct values${distinct.counts ? ', each with how many records hold it' : ''}.`,
        member === null
          ? values
          : { type: 'object', properties: { [member]: values }, required: [member], additionalProperties: false },
        member === null ? [one] : { [member]: [one] },
      ),
      ...errorResponses(plan.errors, [...LIST_ERRORS, 'forbidden']),
    },
  };
};

/** The add and remove operations of a relation: the target named by its key, its view (or nothing) answered. */
const relationOperations = (plan: Plan, join: ResourcePlan): Record<string, OpenApiObject> => {
  const relation = join.relation;
  const target = plan.resourcesByName.get(relation?.targetResource ?? '');
  if (!relation || !target) return {};
  const parameters = routeParameters(plan, target, { binding: { parents: [], item: relation.params } });
  const view = relation.view ? target.views.get(relation.view) : undefined;
  const shown = view
    ? {
        schema: ref('schemas', viewComponentName(target, view)),
        example: exampleView(target, view, plan.resourcesByName),
      }
    : answerOf(target, 'get', plan.resourcesByName);
  const envelope = relation.envelope === undefined ? target.wire.envelope : relation.envelope;
  const answer = (what: string) =>
    relation.answer === 'none'
      ? { '204': success(`${what}; no body.`) }
      : {
          '200': success(
            `${what}: the ${target.name}, as the caller now sees it.`,
            envelope
              ? {
                  type: 'object',
                  properties: { [envelope]: shown.schema },
                  required: [envelope],
                  additionalProperties: false,
                }
              : shown.schema,
            envelope ? { [envelope]: shown.example } : shown.example,
            ['ETag'],
          ),
        };
  const errors = ['not_found', 'invalid_reference', 'internal', 'busy', 'storage_unavailable'];
  return {
    [relation.add.toLowerCase()]: {
      operationId: `add${join.name}`,
      summary: `Add a ${join.name} of the caller and this ${target.name} (idempotent)`,
      tags: [target.name],
      parameters,
      responses: { ...answer('Added, or already there'), ...errorResponses(plan.errors, errors) },
    },
    delete: {
      operationId: `remove${join.name}`,
      summary: `Remove the ${join.name} of the caller and this ${target.name}`,
      description:
        relation.missing === 'not_found'
          ? `404 when there is no such ${join.name}.`
          : `Removing one that is not there changes nothing and answers the same.`,
      tags: [target.name],
      parameters,
      responses: { ...answer('Removed'), ...errorResponses(plan.errors, errors) },
    },
  };
};

/** A resource's named lists and its relation, keyed by path and method. */
export const relationPaths = (
  plan: Plan,
  resource: ResourcePlan,
  recordList: (named: NamedListPlan) => OpenApiObject,
): Record<string, PathItem> => {
  const base = plan.service.basePath;
  const out: Record<string, PathItem> = {};
  for (const named of resource.lists)
    out[`${base}${named.path}`] = {
      get: named.distinct ? distinctOperation(plan, resource, named) : recordList(named),
    };
  if (resource.relation) out[`${base}${resource.relation.path}`] = relationOperations(plan, resource);
  return out;
};
