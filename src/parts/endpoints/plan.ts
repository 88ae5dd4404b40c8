import type {
  CustomEndpointPlan,
  FieldPlan,
  ListPlan,
  Operation,
  ResourcePlan,
  SortKey,
  StateMachinePlan,
} from '../../plan/types.ts';
import type { ServiceSpec } from '../../spec/schema.ts';
import { parseDuration } from '../../spec/units.ts';
import { collectionSegment } from '../resources/naming.ts';
import type { ResourceSpec } from '../resources/schema.ts';
import { isListParamProblem, resolveListParam } from './list-params-plan.ts';
import { planNamedLists, planRelation } from './named-lists-plan.ts';
import { keyModel } from './path-binding.ts';
import { boundPath, defaultItemPath, planParentParams, planRoutes } from './route-plan.ts';
import type { ResourceEndpointsSpec } from './schema.ts';
import { planWire, serviceWire } from './wire-plan.ts';

const DAY_MS = 86_400_000;

export const DEFAULT_OPERATIONS: readonly Operation[] = ['list', 'get', 'create', 'update', 'delete'];
export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

/** Names of `{param}` segments in a path template. */
export const pathParams = (path: string): string[] => [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] ?? '');

/** The endpoints part's entry for a resource, if the spec gives one. */
export const resourceEndpointsSpec = (spec: ServiceSpec, resource: string): ResourceEndpointsSpec | undefined => {
  const entry = (spec.endpoints as Record<string, unknown> | undefined)?.[resource];
  return entry && typeof entry === 'object' && !Array.isArray(entry) ? (entry as ResourceEndpointsSpec) : undefined;
};

export const parseSortKeys = (text: string): SortKey[] =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => (s.startsWith('-') ? { field: s.slice(1), desc: true } : { field: s.replace(/^\+/, ''), desc: false }));

export const planResourceEndpoints = (
  spec: ServiceSpec,
  name: string,
  resource: ResourceSpec,
  fields: ReadonlyMap<string, FieldPlan>,
  states: StateMachinePlan | undefined,
  maxPageSize: number,
): Pick<
  ResourcePlan,
  | 'collectionPath'
  | 'itemPath'
  | 'parentParams'
  | 'operations'
  | 'list'
  | 'wire'
  | 'key'
  | 'routes'
  | 'item'
  | 'lists'
  | 'relation'
  | 'session'
> => {
  const entry = resourceEndpointsSpec(spec, name);
  const model = keyModel(spec);
  const collectionPath = entry?.path ?? `/${collectionSegment(name, resource.plural)}`;
  const parentParams = planParentParams(model, name, collectionPath);
  const itemPath =
    entry?.overrides?.get?.path ??
    defaultItemPath(
      model,
      name,
      collectionPath,
      parentParams.map((p) => p.field),
    );
  const operations = new Set(entry?.operations ?? DEFAULT_OPERATIONS);
  const max = Math.min(entry?.list?.pageSize?.max ?? MAX_PAGE_SIZE, maxPageSize);
  const filter = [...(entry?.list?.filter ?? [])];
  if (states && !filter.includes(states.field)) filter.push(states.field);
  const list: ListPlan = {
    filter,
    sort: [...new Set(['createdAt', ...(entry?.list?.sort ?? [])])],
    defaultSort: parseSortKeys(entry?.list?.defaultSort ?? 'createdAt'),
    pageSize: { default: Math.min(entry?.list?.pageSize?.default ?? DEFAULT_PAGE_SIZE, max), max },
    expand: entry?.list?.expand ?? [...fields.values()].filter((f) => f.type === 'ref').map((f) => f.name),
    params: new Map(
      Object.entries(entry?.list?.params ?? {}).map(([param, p]) => {
        const resolved = resolveListParam(spec, name, param, p);
        // The spec was checked: a problem here is a bug in the checker, not the user's.
        if (isListParamProblem(resolved)) throw new Error(`${name}.list.params.${param}: ${resolved.message}`);
        return [param, resolved] as const;
      }),
    ),
  };
  const relation = planRelation(spec, name, entry);
  return {
    collectionPath,
    itemPath,
    parentParams,
    operations,
    list,
    wire: planWire(serviceWire(spec), entry?.wire, [...fields.values()], resource.object, computedNames(resource)),
    key: model.keyOf(name),
    item: boundPath(model, name, itemPath, true, parentParams),
    routes: planRoutes(model, name, entry, operations, { collection: collectionPath, item: itemPath }, parentParams),
    lists: planNamedLists(spec, name, entry),
    ...(relation ? { relation } : {}),
    ...(entry?.session
      ? {
          session: {
            scheme: entry.session.scheme,
            field: entry.session.field ?? 'token',
            identifier: entry.session.identifier,
            password: entry.session.password ?? 'password',
            signIn: entry.session.signIn,
            expiresInMs: parseDuration(entry.session.expiresIn ?? '24h') ?? DAY_MS,
          },
        }
      : {}),
  };
};

/** The computed fields a resource's answers may show: its own and its views'. */
const computedNames = (resource: ResourceSpec): string[] => [
  ...new Set([
    ...Object.keys(resource.computed ?? {}),
    ...Object.values(resource.views ?? {}).flatMap((v) => Object.keys(v.computed ?? {})),
  ]),
];

export const planCustomEndpoints = (spec: ServiceSpec): CustomEndpointPlan[] =>
  (spec.endpoints?.custom ?? []).map((c) => {
    const [module = '', exportName = 'default'] = c.handler.split('#');
    return {
      name: c.name,
      method: c.method,
      path: c.path,
      ...(c.summary ? { summary: c.summary } : {}),
      handler: { module, export: exportName },
      ...(c.request?.params ? { params: c.request.params } : {}),
      ...(c.request?.query ? { query: c.request.query } : {}),
      ...(c.request?.body ? { body: c.request.body } : {}),
      ...(c.response
        ? {
            response: {
              status: c.response.status ?? 200,
              ...(c.response.fields ? { fields: c.response.fields } : {}),
              list: c.response.list === true,
            },
          }
        : {}),
      errors: c.errors ?? [],
    };
  });
