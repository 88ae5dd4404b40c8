import type { Operation, ResourcePlan } from '../../plan/types.ts';
import type { Handler, HandlerInput, HandlerOutput, RuntimeContext } from '../../runtime/context.ts';
import type { FilterOp, ListQuery, Row } from '../../storage/index.ts';
import { routeAccess } from '../auth/route-access.ts';
import { ApiError } from '../errors/api-error.ts';
import { createRecordShapes, withComputed } from '../resources/computed-runtime.ts';
import { createReadableLookup, notFound } from '../resources/load-record.ts';
import { normalizeFilterValue } from '../resources/normalize.ts';
import { createRecordWriter } from '../resources/record-io.ts';
import type { RecordHandlers } from '../resources/runtime.ts';
import { listInProcess } from './list-runtime.ts';

/** A record as a handler sees it: as the API answers it to this caller, without the fields it may not read. */
export type ApiRecord = { readonly id: string; readonly createdAt: string; readonly updatedAt: string } & Readonly<
  Record<string, unknown>
>;

export type RecordFilterOp = FilterOp;

/** What `list` reads: filters, sort, limit and count, by field name, like a list request's query. */
export interface RecordQuery {
  /** Every filter must hold; `op` defaults to `eq`, and `in` takes an array. Values are typed (numbers, booleans). */
  readonly filters?: ReadonlyArray<{ readonly field: string; readonly op?: RecordFilterOp; readonly value: unknown }>;
  readonly sort?: ReadonlyArray<{ readonly field: string; readonly desc?: boolean }>;
  /** At most this many records (default 100, at most 1,000). */
  readonly limit?: number;
  /** Also count every matching record the caller may read. */
  readonly count?: boolean;
}

export interface RecordPage {
  readonly rows: readonly ApiRecord[];
  /** With `count: true`: every matching record the caller may read. */
  readonly total?: number;
}

/**
 * One resource as a custom handler reaches it: every read and write is the caller's, under the caller's rules.
 * A write runs the same code as the generated endpoint (validation, rules, owner, references, hooks and events) in
 * the request's transaction; a refusal fails the request with the answer that endpoint would give.
 */
export interface RecordDoor {
  /** The record as the caller may see it; undefined when there is none or the caller may not read it, alike. */
  get(id: string): Promise<ApiRecord | undefined>;
  /** The records the caller may read that match; a filter or sort on a field hidden from the caller answers 400. */
  list(query?: RecordQuery): Promise<RecordPage>;
  /** Creates a record as `POST <collection>` would. */
  create(body: Readonly<Record<string, unknown>>): Promise<ApiRecord>;
  /** Changes a record as `PATCH <item>` would (JSON Merge Patch); 404 when the caller may not read it. */
  update(id: string, patch: Readonly<Record<string, unknown>>): Promise<ApiRecord>;
  /** Replaces a record as `PUT <item>` would. */
  replace(id: string, body: Readonly<Record<string, unknown>>): Promise<ApiRecord>;
  /** Deletes a record as `DELETE <item>` would. */
  delete(id: string): Promise<void>;
}

/** `ctx.records`: one door per resource, by name. */
export type RecordDoors<Resource extends string = string> = { readonly [K in Resource]: RecordDoor };

const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;
const SYSTEM_FIELDS = new Set(['id', 'createdAt', 'updatedAt']);

const compileDoor = (ctx: RuntimeContext, resource: ResourcePlan, h: RecordHandlers) => {
  const writer = createRecordWriter(resource);
  const readable = createReadableLookup(ctx, resource);
  const shapes = createRecordShapes(ctx, resource);
  // The roles the generated endpoint asks for (an override's `roles`) hold for the door too.
  const rolesOf = (op: Operation) => routeAccess(ctx.plan, { resource: resource.name, action: op }).roles;
  const roles = new Map(
    (['list', 'get', 'create', 'update', 'replace', 'delete'] as const).map((o) => [o, rolesOf(o)]),
  );
  const may = (input: HandlerInput, op: Operation) => {
    const needed = roles.get(op) ?? [];
    return needed.length === 0 || needed.some((r) => input.principal?.roles.includes(r));
  };
  const view = (input: HandlerInput, row: Row) =>
    writer.toApi(writer.visibleTo(row, ctx.access.hiddenFields(resource, input.principal))) as ApiRecord;
  /** A field a list may name: one of the resource's (else the handler is wrong) that the caller may read. */
  const field = (hidden: ReadonlySet<string>, name: string, code: 'invalid_filter' | 'invalid_sort') => {
    if (!SYSTEM_FIELDS.has(name) && !resource.fieldsByName.has(name))
      throw new Error(`records.${resource.name}.list: ${resource.name} has no field ${name}`);
    if (hidden.has(name))
      throw new ApiError(code, `Cannot ${code === 'invalid_sort' ? 'sort' : 'filter'} on "${name}".`);
    return name;
  };

  /** A filter value as the field stores it (its declared normalisers), like a list request's. */
  const normalized = (name: string, op: RecordFilterOp, value: unknown) => {
    const f = resource.fieldsByName.get(name);
    return f ? normalizeFilterValue(f, op, value) : value;
  };

  /** The params of the generated item route: the id, and the parents of a nested path taken from the record. */
  const itemParams = async (input: HandlerInput, id: string): Promise<Record<string, string>> => {
    if (resource.parentParams.length === 0) return { id };
    const row = await readable(id, input.principal);
    if (!row) throw notFound(resource, id);
    return { id, ...Object.fromEntries(resource.parentParams.map((p) => [p.param, String(row[p.field] ?? '')])) };
  };
  const run = async (
    input: HandlerInput,
    op: Operation,
    handler: Handler,
    params: Record<string, string>,
    body?: unknown,
  ): Promise<HandlerOutput> => {
    if (!may(input, op)) throw new ApiError('forbidden', `You may not ${op} this ${resource.name}.`);
    // Inside an unsafe request this joins its transaction; in a GET handler the write gets one of its own.
    return ctx.store.transaction(() => handler({ ...input, params, query: {}, headers: {}, body }));
  };
  const record = (out: HandlerOutput) => JSON.parse(out.body ?? 'null') as ApiRecord;

  return (input: HandlerInput): RecordDoor => ({
    async get(id) {
      if (!may(input, 'get')) return undefined;
      const row = await readable(id, input.principal);
      if (!row) return undefined;
      const [filled = row] = await shapes.fill([row], resource.computed, input.principal);
      return view(input, filled);
    },
    async list(query = {}) {
      if (!may(input, 'list')) return { rows: [], ...(query.count ? { total: 0 } : {}) };
      const limit = Math.min(Math.max(1, Math.trunc(query.limit ?? DEFAULT_LIMIT)), MAX_LIMIT);
      const hidden = ctx.access.hiddenFields(resource, input.principal);
      const asked: ListQuery = {
        filters: (query.filters ?? []).map((f) => ({
          field: field(hidden, f.field, 'invalid_filter'),
          op: f.op ?? 'eq',
          value: normalized(f.field, f.op ?? 'eq', f.value),
        })),
        sort: (query.sort ?? []).map((s) => ({ field: field(hidden, s.field, 'invalid_sort'), desc: s.desc === true })),
        limit,
        count: query.count === true,
      };
      const rule = ctx.access.listFilter(resource, input.principal);
      const computing = withComputed(asked, resource.computed, input.principal);
      const listed = rule && 'where' in rule ? { ...computing, where: rule.where } : computing;
      const result =
        rule && 'test' in rule
          ? await listInProcess(ctx, resource, listed, limit, rule.test)
          : await ctx.store.list(resource.name, listed);
      const rows = result.rows.slice(0, limit).map((row) => view(input, row));
      return { rows, ...(result.total !== undefined ? { total: result.total } : {}) };
    },
    async create(body) {
      const parents = resource.parentParams.map((p) => [p.param, String(body[p.field] ?? '')]);
      return record(await run(input, 'create', h.create, Object.fromEntries(parents), body));
    },
    async update(id, patch) {
      return record(await run(input, 'update', h.update, await itemParams(input, id), patch));
    },
    async replace(id, body) {
      return record(await run(input, 'replace', h.replace, await itemParams(input, id), body));
    },
    async delete(id) {
      await run(input, 'delete', h.remove, await itemParams(input, id));
    },
  });
};

/**
 * Compiles every resource's door once; `for(input)` gives a request its `ctx.records`, which reaches the store only
 * through the doors (nothing on it leads to the store itself).
 */
export const createRecordDoors = (ctx: RuntimeContext, handlers: ReadonlyMap<string, RecordHandlers>) => {
  const inputs = new WeakMap<object, HandlerInput>();
  const shared: PropertyDescriptorMap = {};
  for (const resource of ctx.plan.resources) {
    const h = handlers.get(resource.name);
    if (!h) continue;
    const door = compileDoor(ctx, resource, h);
    shared[resource.name] = {
      enumerable: true,
      get(this: object) {
        return door(inputs.get(this) as HandlerInput);
      },
    };
  }
  const prototype = Object.freeze(Object.create(null, shared));
  return {
    for(input: HandlerInput): RecordDoors {
      const doors = Object.freeze(Object.create(prototype)) as RecordDoors;
      inputs.set(doors, input);
      return doors;
    },
  };
};

export type RecordDoorFactory = ReturnType<typeof createRecordDoors>;
