import type { Operation, Plan, ResourcePlan } from '../../plan/types.ts';
import { customEndpointErrors, errorResponses, resourceOperationErrors } from '../errors/openapi.ts';
import { type OpenApiComponents, type OpenApiObject, ref, success } from '../openapi-model.ts';
import { exampleCreate, exampleId, examplePatch } from '../resources/example.ts';
import { pluralize, withArticle } from '../resources/naming.ts';
import { resourceSchemaNames } from '../resources/openapi.ts';
import { answerOf } from '../resources/view-openapi.ts';
import { customOperation } from './custom-openapi.ts';
import { filterParameters } from './filter-openapi.ts';
import { pageExample, pagingParameters } from './paging-openapi.ts';
import { exampleInEnvelope, inEnvelope } from './wire-openapi.ts';

export type PathItem = Record<string, OpenApiObject>;

const JSON_TYPE = 'application/json';

/** Headers and parameters every operation shares. */
export const endpointComponents = (): Pick<OpenApiComponents, 'parameters' | 'headers'> => ({
  parameters: {
    IfMatch: {
      name: 'If-Match',
      in: 'header',
      description:
        'The ETag of the record as last read; the write fails with 412 when it has changed since. `*` matches any.',
      schema: { type: 'string', examples: ['"r1"'] },
    },
    IdempotencyKey: {
      name: 'Idempotency-Key',
      in: 'header',
      description:
        'Makes a retry safe: a retry with the same key and body replays the first answer for 24 hours; with another body it is refused (422).',
      schema: { type: 'string', minLength: 1, maxLength: 255, examples: ['9c6f1e0a-7d1b-4c55-8a63-1f0e2b3c4d5e'] },
    },
    RequestId: {
      name: 'X-Request-Id',
      in: 'header',
      description: 'Your id for this request (1–128 of A–Z a–z 0–9 . _ -); echoed back, else one is generated.',
      schema: { type: 'string', pattern: '^[A-Za-z0-9._-]{1,128}$' },
    },
  },
  headers: {
    'X-Request-Id': { description: 'The id of this request, as logged.', schema: { type: 'string' } },
    ETag: {
      description: 'The revision of the record; send it back in If-Match.',
      schema: { type: 'string', examples: ['"r1"'] },
    },
    Location: { description: 'The URL of the created record.', schema: { type: 'string', format: 'uri-reference' } },
    Link: {
      description:
        'RFC 8288 links to the first, previous, next and last pages (`rel` first, prev, next, last), as they apply.',
      schema: {
        type: 'string',
        examples: ['</issues?page=2&per_page=30>; rel="next", </issues?page=5&per_page=30>; rel="last"'],
      },
    },
    'Idempotent-Replayed': {
      description: 'Present (true) when this answer replays an earlier request with the same Idempotency-Key.',
      schema: { type: 'string', enum: ['true'] },
    },
  },
});

export const pathParameters = (plan: Plan, resource: ResourcePlan, item: boolean): OpenApiObject[] => [
  ...resource.parentParams.map((p) => {
    const target = resource.fieldsByName.get(p.field)?.ref?.to;
    const parent = target ? plan.resourcesByName.get(target) : undefined;
    return {
      name: p.param,
      in: 'path',
      required: true,
      description: `The id of the ${target ?? p.field} this collection belongs to.`,
      schema: { type: 'string', ...(parent ? { examples: [exampleId(parent)] } : {}) },
    };
  }),
  ...(item
    ? [
        {
          name: 'id',
          in: 'path',
          required: true,
          // No `pattern`: a mock or a client that makes up ids from the record schema must not be refused here.
          description: `The ${resource.name}'s id; an id this resource could not have issued is 404.`,
          schema: { type: 'string', examples: [exampleId(resource)] },
        },
      ]
    : []),
];

const listParameters = (resource: ResourcePlan): OpenApiObject[] => {
  const { list } = resource;
  const wire = (name: string) => resource.wire.names.out.get(name)?.name ?? name;
  const sortable = list.sort.map(wire);
  const expandable = list.expand.map(wire);
  const sortKey = `[-+]?(${sortable.join('|')})`;
  return [
    ...pagingParameters(resource),
    {
      name: 'sort',
      in: 'query',
      description: `Comma-separated fields, \`-\` for descending; sortable: ${sortable.join(', ')}. Default: ${list.defaultSort.map((s) => `${s.desc ? '-' : ''}${wire(s.field)}`).join(',')}.`,
      schema: {
        type: 'string',
        pattern: `^${sortKey}(,${sortKey}){0,3}$`,
        examples: [`-${sortable.at(-1) ?? 'createdAt'}`],
      },
    },
    ...(expandable.length
      ? [
          {
            name: 'expand',
            in: 'query',
            description: `Comma-separated references to replace by the records they name: ${expandable.join(', ')}.`,
            schema: { type: 'string', pattern: `^(${expandable.join('|')})(,(${expandable.join('|')}))*$` },
          },
        ]
      : []),
    ...(resource.wire.paging === 'cursor'
      ? [
          {
            name: 'count',
            in: 'query',
            description: `Also answer \`${resource.wire.list.total ?? 'total'}\`, the number of matching records.`,
            schema: { type: 'boolean', default: false },
          },
        ]
      : []),
    ...filterParameters(resource),
  ];
};

export const headerParams = (...names: string[]) => names.map((n) => ref('parameters', n));

/** Every operation of one resource, keyed by path and method. */
export const resourcePaths = (plan: Plan, resource: ResourcePlan): Record<string, PathItem> => {
  const names = resourceSchemaNames(resource);
  // An operation answers with the record, or with the view its override names.
  const answer = (op: Operation) => answerOf(resource, op, plan.resourcesByName);
  const errors = (op: Operation) => errorResponses(plan.errors, resourceOperationErrors(plan, resource, op));
  const base = plan.service.basePath;
  const collection: PathItem = {};
  const item: PathItem = {};
  const tags = [resource.name];
  const body = (schema: string, example: unknown, types = [JSON_TYPE]) => ({
    required: true,
    content: Object.fromEntries(
      types.map((t) => [
        t,
        { schema: inEnvelope(resource, ref('schemas', schema)), example: exampleInEnvelope(resource, example) },
      ]),
    ),
  });
  // Answers of one record: in the single-record envelope when the wire has one.
  const answered = (op: Operation, description: string, headers: string[]) =>
    success(
      description,
      inEnvelope(resource, answer(op).schema),
      exampleInEnvelope(resource, answer(op).example),
      headers,
    );
  const has = (op: Operation) => resource.operations.has(op);
  const plural = pluralize(resource.name);

  if (has('list'))
    collection.get = {
      operationId: `list${plural}`,
      summary: `List ${plural}`,
      tags,
      parameters: [...pathParameters(plan, resource, false), ...listParameters(resource), ...headerParams('RequestId')],
      responses: {
        '200': success(
          `A page of ${plural}.`,
          ref('schemas', names.page),
          pageExample(resource, answer('list').example),
          resource.wire.paging === 'page' ? ['Link'] : [],
        ),
        ...errors('list'),
      },
    };
  if (has('create'))
    collection.post = {
      operationId: `create${resource.name}`,
      summary: `Create ${withArticle(resource.name)}`,
      tags,
      parameters: [...pathParameters(plan, resource, false), ...headerParams('IdempotencyKey', 'RequestId')],
      requestBody: body(names.create, exampleCreate(resource, plan.resourcesByName)),
      responses: {
        '201': answered('create', `The created ${resource.name}.`, ['ETag', 'Location', 'Idempotent-Replayed']),
        ...errors('create'),
      },
    };
  const itemParams = pathParameters(plan, resource, true);
  if (has('get'))
    item.get = {
      operationId: `get${resource.name}`,
      summary: `Get ${withArticle(resource.name)}`,
      tags,
      parameters: [...itemParams, ...headerParams('RequestId')],
      responses: { '200': answered('get', `The ${resource.name}.`, ['ETag']), ...errors('get') },
    };
  if (has('update'))
    item.patch = {
      operationId: `update${resource.name}`,
      summary: `Update ${withArticle(resource.name)} (JSON Merge Patch)`,
      tags,
      parameters: [...itemParams, ...headerParams('IfMatch', 'IdempotencyKey', 'RequestId')],
      requestBody: body(names.patch, examplePatch(resource, plan.resourcesByName), [
        JSON_TYPE,
        'application/merge-patch+json',
      ]),
      responses: {
        '200': answered('update', `The updated ${resource.name}.`, ['ETag', 'Idempotent-Replayed']),
        ...errors('update'),
      },
    };
  if (has('replace'))
    item.put = {
      operationId: `replace${resource.name}`,
      summary: `Replace ${withArticle(resource.name)}`,
      tags,
      parameters: [...itemParams, ...headerParams('IfMatch', 'IdempotencyKey', 'RequestId')],
      requestBody: body(names.create, exampleCreate(resource, plan.resourcesByName)),
      responses: {
        '200': answered('replace', `The replaced ${resource.name}.`, ['ETag', 'Idempotent-Replayed']),
        ...errors('replace'),
      },
    };
  if (has('delete'))
    item.delete = {
      operationId: `delete${resource.name}`,
      summary: `Delete ${withArticle(resource.name)}`,
      tags,
      parameters: [...itemParams, ...headerParams('IfMatch', 'IdempotencyKey', 'RequestId')],
      responses: { '204': success('Deleted.', undefined, undefined, ['Idempotent-Replayed']), ...errors('delete') },
    };
  const out: Record<string, PathItem> = {};
  if (Object.keys(collection).length) out[`${base}${resource.collectionPath}`] = collection;
  if (Object.keys(item).length) out[`${base}${resource.itemPath}`] = item;
  return out;
};

/** Custom endpoints, keyed by path and method; tagged with the resource whose path they extend. */
export const customPaths = (plan: Plan): Record<string, PathItem> => {
  const out: Record<string, PathItem> = {};
  for (const endpoint of plan.custom) {
    const owner = plan.resources.find((r) => endpoint.path.startsWith(`${r.collectionPath}/`));
    const path = `${plan.service.basePath}${endpoint.path}`;
    out[path] = {
      ...out[path],
      [endpoint.method.toLowerCase()]: customOperation(
        plan,
        endpoint,
        owner?.name ?? 'Custom',
        errorResponses(plan.errors, customEndpointErrors(endpoint)),
      ),
    };
  }
  return out;
};
