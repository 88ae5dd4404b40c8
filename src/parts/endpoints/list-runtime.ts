import type { ResourcePlan } from '../../plan/types.ts';
import type { Handler, RuntimeContext } from '../../runtime/context.ts';
import type { Filter, ListQuery, ListResult, Row } from '../../storage/index.ts';
import { createExpansion, createRecordShapes, withComputed } from '../resources/computed-runtime.ts';
import { createParentCheck } from '../resources/load-record.ts';
import { createRecordWriter } from '../resources/record-io.ts';
import { encodeCursor, parseListQuery } from './list-query.ts';

const SCAN_BATCH = 200;
const MAX_SCANNED = 10_000;

/**
 * A list whose access rule does not compile to SQL: reads on in keyset order, testing each row, until the page
 * (plus one) is full. `total` counts the visible rows of the first MAX_SCANNED; past that it is left out.
 */
export const listInProcess = async (
  ctx: RuntimeContext,
  resource: ResourcePlan,
  query: ListQuery,
  pageSize: number,
  test: (row: Row) => boolean,
): Promise<ListResult> => {
  const rows: Row[] = [];
  let after = query.after;
  let scanned = 0;
  while (rows.length <= pageSize && scanned < MAX_SCANNED) {
    const batch = await ctx.store.list(resource.name, {
      ...query,
      count: false,
      limit: SCAN_BATCH,
      ...(after ? { after } : {}),
    });
    scanned += batch.rows.length;
    for (const row of batch.rows) if (rows.length <= pageSize && test(row)) rows.push(row);
    const last = batch.rows.at(-1);
    if (batch.rows.length < SCAN_BATCH || !last) break;
    after = ctx.store.keysetOf(resource.name, query, last);
  }
  if (!query.count) return { rows };
  let total = 0;
  let cursor: readonly unknown[] | undefined;
  for (let seen = 0; seen < MAX_SCANNED; ) {
    const { after: _skip, ...rest } = query;
    const batch = await ctx.store.list(resource.name, {
      ...rest,
      count: false,
      limit: SCAN_BATCH,
      ...(cursor ? { after: cursor } : {}),
    });
    seen += batch.rows.length;
    total += batch.rows.filter(test).length;
    const last = batch.rows.at(-1);
    if (batch.rows.length < SCAN_BATCH || !last) return { rows, total };
    cursor = ctx.store.keysetOf(resource.name, query, last);
  }
  return { rows };
};

/** Compiles the list handler of a resource: `{data, nextCursor}` (and `total` with count=true). */
export const compileListHandler = (ctx: RuntimeContext, resource: ResourcePlan): Handler => {
  const writer = createRecordWriter(resource);
  const parentsOf = createParentCheck(ctx, resource);
  const shape = createRecordShapes(ctx, resource).shapeOf('list');
  const expand = createExpansion(ctx, resource);
  return async (input) => {
    if (resource.parentParams.length) await parentsOf(input);
    const parents: Filter[] = resource.parentParams.map((p) => ({
      field: p.field,
      op: 'eq',
      value: input.params[p.param] ?? '',
    }));
    const hidden = ctx.access.hiddenFields(resource, input.principal);
    const parsed = parseListQuery(resource, input.query, parents, hidden);
    const rule = ctx.access.listFilter(resource, input.principal);
    // Computed fields are read in the page's own query: one SELECT for the page, whatever its size.
    const asked = withComputed(parsed.query, shape.computed, input.principal);
    const query = rule && 'where' in rule ? { ...asked, where: rule.where } : asked;
    const result =
      rule && 'test' in rule
        ? await listInProcess(ctx, resource, query, parsed.pageSize, rule.test)
        : await ctx.store.list(resource.name, query);
    const page = result.rows.slice(0, parsed.pageSize);
    const last = page.at(-1);
    const nextCursor =
      result.rows.length > parsed.pageSize && last
        ? encodeCursor(parsed.sortKey, ctx.store.keysetOf(resource.name, query, last))
        : null;
    const data: Array<Record<string, unknown>> = page.map((row) => shape.writer.toApi(writer.visibleTo(row, hidden)));
    for (const name of parsed.expand) {
      const ids = [...new Set(page.map((r) => r[name]).filter((v): v is string => typeof v === 'string'))];
      // The records as the caller may see them (or as the reference's view); one the caller may not read stays an id.
      const targets = await expand(name, ids, input.principal);
      if (!targets) continue;
      // Integer ids (and references to them) are numbers in the answer and text in storage.
      for (const record of data)
        if (typeof record[name] === 'string' || typeof record[name] === 'number')
          record[name] = targets.get(String(record[name])) ?? record[name];
    }
    const body = JSON.stringify({ data, nextCursor, ...(result.total !== undefined ? { total: result.total } : {}) });
    return { status: 200, body, headers: { 'content-type': 'application/json; charset=utf-8' } };
  };
};
