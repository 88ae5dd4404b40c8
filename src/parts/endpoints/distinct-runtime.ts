import type { NamedListPlan, ResourcePlan } from '../../plan/types.ts';
import type { Handler, HandlerInput, RuntimeContext } from '../../runtime/context.ts';
import type { DistinctQuery, DistinctRow, RelatedCondition } from '../../storage/index.ts';
import { ApiError } from '../errors/api-error.ts';
import { celCondition } from '../resources/computed-runtime.ts';
import { listInProcess } from './list-runtime.ts';

const JSON_TYPE = 'application/json; charset=utf-8';
const PARAMS = new Set(['limit', 'offset', 'sort']);
const MAX_OFFSET = 1_000_000;
const SCANNED = 10_000;

const wholeNumber = (name: string, raw: string | string[] | undefined, min: number, max: number) => {
  if (raw === undefined) return undefined;
  if (Array.isArray(raw) || !/^\d{1,9}$/.test(raw) || Number(raw) < min || Number(raw) > max)
    throw new ApiError('invalid_query', `${name} must be an integer from ${min} to ${max}.`, undefined, {
      param: name,
    });
  return Number(raw);
};

/** A value as its field types it: PostgreSQL reads an array's items as text. */
const typed = (type: string, value: unknown): unknown => {
  if ((type === 'integer' || type === 'number' || type === 'decimal') && typeof value === 'string')
    return Number(value);
  if (type === 'boolean' && typeof value !== 'boolean') return value === true || value === 1 || value === 'true';
  return value;
};

/** The distinct values of rows read in the process (a read rule that does not compile to SQL). */
const distinctOf = (rows: ReadonlyArray<Record<string, unknown>>, field: string, q: DistinctQuery): DistinctRow[] => {
  const counts = new Map<string, { value: unknown; count: number }>();
  for (const row of rows) {
    const v = row[field];
    for (const item of new Set(Array.isArray(v) ? v : [v])) {
      if (item === null || item === undefined) continue;
      const key = JSON.stringify(item);
      const entry = counts.get(key) ?? { value: item, count: 0 };
      entry.count++;
      counts.set(key, entry);
    }
  }
  const byValue = (a: DistinctRow, b: DistinctRow) =>
    typeof a.value === 'number' && typeof b.value === 'number'
      ? a.value - b.value
      : String(a.value) < String(b.value)
        ? -1
        : String(a.value) > String(b.value)
          ? 1
          : 0;
  const sign = q.desc ? -1 : 1;
  const sorted = [...counts.values()].sort((a, b) =>
    q.order === 'count' ? sign * (a.count - b.count) || byValue(a, b) : sign * byValue(a, b),
  );
  return sorted.slice(q.offset, q.offset + q.limit);
};

/**
 * Compiles a distinct list (`GET /tags` → `{"tags": ["dragons", "training"]}`): the values of one field over the
 * records the caller may read (and the list's CEL filter keeps), in one GROUP BY query, with `limit`, `offset` and
 * `sort` (value or count).
 */
export const compileDistinctHandler = (ctx: RuntimeContext, resource: ResourcePlan, named: NamedListPlan): Handler => {
  const distinct = named.distinct;
  if (!distinct) throw new Error(`${resource.name}.lists.${named.name} is not a distinct list`);
  const { field, counts, compared } = distinct;
  const member = distinct.items ?? resource.wire.list.items;
  const max = resource.list.pageSize.max;
  const sorts = counts ? ['value', '-value', 'count', '-count'] : ['value', '-value'];
  const filter = named.filter?.query;
  const query = (input: HandlerInput): DistinctQuery => {
    for (const key of Object.keys(input.query))
      if (!PARAMS.has(key))
        throw new ApiError('invalid_query', `${key.slice(0, 64)} is not a parameter of this list.`, undefined, {
          param: key.slice(0, 64),
        });
    const sort = input.query.sort;
    if (sort !== undefined && (typeof sort !== 'string' || !sorts.includes(sort)))
      throw new ApiError('invalid_sort', `Sort on one of ${sorts.join(', ')}.`);
    const order = typeof sort === 'string' && sort.endsWith('count') ? 'count' : 'value';
    const related: RelatedCondition[] = filter ? [celCondition(filter, input.principal)] : [];
    return {
      field,
      order,
      desc: typeof sort === 'string' ? sort.startsWith('-') : false,
      limit: wholeNumber('limit', input.query.limit, 1, max) ?? max,
      offset: wholeNumber('offset', input.query.offset, 0, MAX_OFFSET) ?? 0,
      ...(related.length ? { related } : {}),
    };
  };
  return async (input) => {
    const q = query(input);
    if (ctx.access.hiddenFields(resource, input.principal).has(field))
      throw new ApiError('forbidden', `You may not read ${resource.name}.${field}.`);
    const rule = ctx.access.listFilter(resource, input.principal);
    let rows: DistinctRow[];
    if (rule && 'test' in rule) {
      const listed = {
        filters: [],
        sort: [],
        limit: SCANNED,
        count: false,
        ...(q.related ? { related: q.related } : {}),
      };
      const found = await listInProcess(ctx, resource, listed, SCANNED, rule.test);
      rows = distinctOf(found.rows, field, q);
    } else rows = await ctx.store.distinct(resource.name, rule ? { ...q, where: rule.where } : q);
    const values = rows.map((r) =>
      counts ? { value: typed(compared.type, r.value), count: r.count } : typed(compared.type, r.value),
    );
    const body = JSON.stringify(member === null ? values : { [member]: values });
    return { status: 200, body, headers: { 'content-type': JSON_TYPE } };
  };
};
