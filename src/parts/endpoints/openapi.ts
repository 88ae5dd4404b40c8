import type { NamedListPlan, Operation, PathBinding, Plan, ResourcePlan, ResourceRoute } from '../../plan/types.ts';
import { customEndpointErrors, errorResponses, resourceOperationErrors } from '../errors/openapi.ts';
import { type OpenApiComponents, type OpenApiObject, ref, success } from '../openapi-model.ts';
import { exampleCreate, examplePatch } from '../resources/example.ts';
import { pluralize, withArticle } from '../resources/naming.ts';
import { resourceSchemaNames } from '../resources/openapi.ts';
import { answerOf } from '../resources/view-openapi.ts';
import { customOperation } from './custom-openapi.ts';
import { filterParameters } from './filter-openapi.ts';
import { pageExample, pagingParameters } from './paging-openapi.ts';
import { routeParameters } from './path-openapi.ts';
import { declaredParameters, relationPaths } from './relation-openapi.ts';
import { signInOperation, withSessionToken } from './session-openapi.ts';
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
    IfNoneMatch: {
      name: 'If-None-Match',
      in: 'header',
      description: 'The ETag of the copy you hold; answered 304 without a body while the record has not changed.',
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

export const pathParameters = (plan: Plan, resource: ResourcePlan, item: boolean): OpenApiObject[] =>
  routeParameters(plan, resource, item ? resource.item : { ...resource.item, binding: collectionBinding(resource) });

/** The collection path's binding: its parents. */
const collectionBinding = (resource: ResourcePlan): PathBinding => ({
  parents: resource.parentParams.map((p) => ({ params: p.params ?? [p.param], field: p.field })),
  item: [],
});
/** `expand`, on a list or a read: the references that may be expanded (those always embedded need not be). */
const expandParameters = (resource: ResourcePlan): OpenApiObject[] => {
  const wire = (name: string) => resource.wire.names.out.get(name)?.name ?? name;
  const expandable = resource.list.expand.filter((n) => !resource.fieldsByName.get(n)?.ref?.embed).map(wire);
  if (expandable.length === 0) return [];
  return [
    {
      name: 'expand',
      in: 'query',
      description: `Comma-separated references to replace by the records they name: ${expandable.join(', ')}. The same list may be sent as repeated \`expand[]\` parameters.`,
      schema: { type: 'string', pattern: `^(${expandable.join('|')})(,(${expandable.join('|')}))*$` },
    },
  ];
};

const listParameters = (resource: ResourcePlan): OpenApiObject[] => {
  const { list } = resource;
  const wire = (name: string) => resource.wire.names.out.get(name)?.name ?? name;
  const sortable = list.sort.map(wire);
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
    ...expandParameters(resource),
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
    ...declaredParameters(resource),
  ];
};

export const headerParams = (...names: string[]) => names.map((n) => ref('parameters', n));

/** Every operation of one resource, keyed by path and method. */
export const resourcePaths = (plan: Plan, resource: ResourcePlan): Record<string, PathItem> => {
  const names = resourceSchemaNames(resource);
  // An operation answers with the record, or with the view its override names.
  const answer = (op: Operation) => {
    const shown = answerOf(resource, op, plan.resourcesByName);
    // A read may expand references too: its record is the one a list shows, references as ids or records.
    const expandable = op === 'get' && !resource.answerViews.get && expandParameters(resource).length > 0;
    return expandable && names.listed === `${resource.name}Listed`
      ? { ...shown, schema: ref('schemas', names.listed) }
      : shown;
  };
  const errors = (op: Operation) => errorResponses(plan.errors, resourceOperationErrors(plan, resource, op));
  const base = plan.service.basePath;
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
  // A session resource answers sign-up and the caller's own record with a fresh token beside the record.
  const answered = (op: Operation, description: string, headers: string[], self = false) => {
    const { session } = resource;
    const shown = session && (op === 'create' || self) ? withSessionToken(plan, resource, session, op) : answer(op);
    return success(
      description,
      inEnvelope(resource, shown.schema),
      exampleInEnvelope(resource, shown.example),
      headers,
    );
  };
  const plural = pluralize(resource.name);
  const operation = (route: ResourceRoute): OpenApiObject => {
    const params = routeParameters(plan, resource, route);
    const own = route.self ? 'Own' : '';
    const yours = route.self ? `your own ${resource.name}` : withArticle(resource.name);
    switch (route.operation) {
      case 'list':
        return {
          operationId: `list${plural}`,
          summary: `List ${plural}`,
          tags,
          parameters: [...params, ...listParameters(resource), ...headerParams('RequestId')],
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
      case 'create':
        return {
          operationId: `create${resource.name}`,
          summary: `Create ${withArticle(resource.name)}`,
          tags,
          parameters: [...params, ...headerParams('IdempotencyKey', 'RequestId')],
          requestBody: body(names.create, exampleCreate(resource, plan.resourcesByName)),
          responses: {
            '201': answered('create', `The created ${resource.name}.`, ['ETag', 'Location', 'Idempotent-Replayed']),
            ...errors('create'),
          },
        };
      case 'get':
        return {
          operationId: `get${own}${resource.name}`,
          summary: `Get ${yours}`,
          tags,
          parameters: [...params, ...expandParameters(resource), ...headerParams('IfNoneMatch', 'RequestId')],
          responses: {
            '200': answered('get', `The ${resource.name}.`, ['ETag'], route.self),
            '304': {
              description: 'Not modified: the ETag in If-None-Match is current.',
              headers: { ETag: ref('headers', 'ETag') },
            },
            ...errors('get'),
          },
        };
      case 'update':
        return {
          operationId: `update${own}${resource.name}`,
          summary: `Update ${yours} (JSON Merge Patch)`,
          tags,
          parameters: [...params, ...headerParams('IfMatch', 'IdempotencyKey', 'RequestId')],
          requestBody: body(names.patch, examplePatch(resource, plan.resourcesByName), [
            JSON_TYPE,
            'application/merge-patch+json',
          ]),
          responses: {
            '200': answered('update', `The updated ${resource.name}.`, ['ETag', 'Idempotent-Replayed'], route.self),
            ...errors('update'),
          },
        };
      case 'replace':
        return {
          operationId: `replace${own}${resource.name}`,
          summary: `Replace ${yours}`,
          tags,
          parameters: [...params, ...headerParams('IfMatch', 'IdempotencyKey', 'RequestId')],
          requestBody: body(names.create, exampleCreate(resource, plan.resourcesByName)),
          responses: {
            '200': answered('replace', `The replaced ${resource.name}.`, ['ETag', 'Idempotent-Replayed'], route.self),
            ...errors('replace'),
          },
        };
      case 'delete':
        return {
          operationId: `delete${own}${resource.name}`,
          summary: `Delete ${yours}`,
          tags,
          parameters: [...params, ...headerParams('IfMatch', 'IdempotencyKey', 'RequestId')],
          responses: { '204': success('Deleted.', undefined, undefined, ['Idempotent-Replayed']), ...errors('delete') },
        };
    }
  };
  const out: Record<string, PathItem> = {};
  for (const route of resource.routes) {
    const path = `${base}${route.path}`;
    out[path] = { ...out[path], [route.method.toLowerCase()]: operation(route) };
  }
  // A named list of records is the list operation on its own path, its summary its own.
  const list = resource.routes.find((r) => r.operation === 'list');
  const recordList = (named: NamedListPlan): OpenApiObject => {
    const listed = operation({
      ...(list ?? resource.routes[0] ?? resource.item),
      operation: 'list',
      method: 'GET',
    } as ResourceRoute);
    return {
      ...listed,
      operationId: `list${plural}${named.name.slice(0, 1).toUpperCase()}${named.name.slice(1)}`,
      summary: named.summary ?? `List ${plural}: ${named.name}`,
      ...(named.filter ? { description: `The ${plural} that \`${named.filter.cel}\` keeps.` } : {}),
      parameters: (listed.parameters as OpenApiObject[]).filter((p) => p.in !== 'path'),
    };
  };
  for (const [path, item] of Object.entries(relationPaths(plan, resource, recordList)))
    out[path] = { ...out[path], ...item };
  if (resource.session) {
    const path = `${base}${resource.session.signIn}`;
    out[path] = { ...out[path], post: signInOperation(plan, resource, resource.session) };
  }
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
