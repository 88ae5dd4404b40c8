import type { NamedListPlan, ResourcePlan } from '../../plan/types.ts';
import type { Handler, HandlerInput, RuntimeContext } from '../../runtime/context.ts';
import { JsonAnswer } from '../../runtime/json-answer.ts';
import type { Filter, ListQuery, ListResult, Row } from '../../storage/index.ts';
import { ApiError } from '../errors/api-error.ts';
import { celCondition, createRecordShapes, withComputed } from '../resources/computed-runtime.ts';
import { createReferenceEmbedder, embeddedFields } from '../resources/embed-references.ts';
import { createParentCheck, createReadableLookup } from '../resources/load-record.ts';
import { createRecordWriter } from '../resources/record-io.ts';
import { compileListAnswer } from './list-answer.ts';
import { encodeCursor, type ParsedList, parseListQuery, withRelated } from './list-query.ts';
import { isConventionalList } from './wire-plan.ts';
import { createWireRecord } from './wire-runtime.ts';

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
  // Offset paging skips the first rows the caller may read, not the first rows of the table.
  let skip = query.offset ?? 0;
  const { offset: _offset, ...scan } = query;
  while (rows.length <= pageSize && scanned < MAX_SCANNED) {
    const batch = await ctx.store.list(resource.name, {
      ...scan,
      count: false,
      limit: SCAN_BATCH,
      ...(after ? { after } : {}),
    });
    scanned += batch.rows.length;
    for (const row of batch.rows) {
      if (rows.length > pageSize || !test(row)) continue;
      if (skip > 0) skip--;
      else rows.push(row);
    }
    const last = batch.rows.at(-1);
    if (batch.rows.length < SCAN_BATCH || !last) break;
    after = ctx.store.keysetOf(resource.name, query, last);
  }
  if (!query.count) return { rows };
  let total = 0;
  let cursor: readonly unknown[] | undefined;
  for (let seen = 0; seen < MAX_SCANNED; ) {
    const { after: _skip, offset: _from, ...rest } = query;
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

/**
 * Compiles the list handler of a resource: `{data, nextCursor}` (and `total` with count=true), or its wire's shape.
 * A named list (a feed) is the same list with its CEL filter as one more condition of the page's query.
 */
export const compileListHandler = (ctx: RuntimeContext, resource: ResourcePlan, named?: NamedListPlan): Handler => {
  const filter = named?.filter?.query;
  const writer = createRecordWriter(resource);
  const parentsOf = createParentCheck(ctx, resource);
  const shape = createRecordShapes(ctx, resource).shapeOf('list');
  const embed = createReferenceEmbedder(ctx, resource);
  const embedded = embeddedFields(resource);
  const onWire = createWireRecord(resource);
  // A list whose answer is the engine's own `{data, nextCursor}` is written as it always was, nothing more.
  const conventional = resource.wire.plain && isConventionalList(resource);
  // Links and `url` name the path the list is served on: a named list's, or the list operation's own.
  const served = named?.path ?? resource.routes.find((r) => r.operation === 'list')?.path;
  const answer = compileListAnswer(ctx.plan.service.basePath, resource, served);
  const anchors = createReadableLookup(ctx, resource);

  /** starting_after / ending_before: the keyset of the record named, which must be one the caller may read. */
  const anchored = async (
    input: HandlerInput,
    parsed: ParsedList,
    query: ListQuery,
  ): Promise<{ query: ListQuery; backwards: boolean }> => {
    const start = parsed.start;
    if (start.style !== 'starting_after') return { query, backwards: false };
    const id = start.startingAfter ?? start.endingBefore;
    if (id === undefined) return { query, backwards: false };
    const param = start.startingAfter !== undefined ? 'starting_after' : 'ending_before';
    const row = await anchors(id, input.principal);
    if (!row || resource.parentParams.some((p) => row[p.field] !== input.params[p.param]))
      throw new ApiError('invalid_query', `${param} names no ${resource.name} of this list.`, undefined, { param });
    const backwards = param === 'ending_before';
    const sorted = { ...query, sort: backwards ? query.sort.map((k) => ({ ...k, desc: !k.desc })) : query.sort };
    return { query: { ...sorted, after: ctx.store.keysetOf(resource.name, sorted, row) }, backwards };
  };

  // Its refusals already name fields and parameters as the wire does (list-query.ts reads wire names).
  return async (input) => {
    if (resource.parentParams.length) await parentsOf(input);
    const parents: Filter[] = resource.parentParams.map((p) => ({
      field: p.field,
      op: 'eq',
      value: input.params[p.param] ?? '',
    }));
    const hidden = ctx.access.hiddenFields(resource, input.principal);
    const parsed = parseListQuery(resource, input.query, parents, hidden);
    if (filter) parsed.query = withRelated(parsed.query, [celCondition(filter, input.principal)]);
    const rule = ctx.access.listFilter(resource, input.principal);
    // Computed fields are read in the page's own query: one SELECT for the page, whatever its size.
    const computed = withComputed(parsed.query, shape.computed, input.principal);
    const { query: asked, backwards } =
      parsed.start.style === 'starting_after'
        ? await anchored(input, parsed, computed)
        : { query: computed, backwards: false };
    const query = rule && 'where' in rule ? { ...asked, where: rule.where } : asked;
    const result =
      rule && 'test' in rule
        ? await listInProcess(ctx, resource, query, parsed.pageSize, rule.test)
        : await ctx.store.list(resource.name, query);
    const page = result.rows.slice(0, parsed.pageSize);
    if (backwards) page.reverse();
    const hasMore = result.rows.length > parsed.pageSize;
    const last = page.at(-1);
    const nextCursor =
      parsed.start.style === 'cursor' && hasMore && last
        ? encodeCursor(parsed.sortKey, ctx.store.keysetOf(resource.name, query, last))
        : null;
    const data: Array<Record<string, unknown>> = page.map((row) => shape.writer.toApi(writer.visibleTo(row, hidden)));
    const references = embedded.length ? [...new Set([...embedded, ...parsed.expand])] : parsed.expand;
    if (references.length) await embed(data, references, input.principal);
    if (conventional) {
      const body = JSON.stringify({ data, nextCursor, ...(result.total !== undefined ? { total: result.total } : {}) });
      return new JsonAnswer(200, body);
    }
    const start = parsed.start;
    return answer(input, {
      data: data.map(onWire),
      nextCursor,
      ...(result.total !== undefined ? { total: result.total } : {}),
      // With ending_before the rows read past the page lie before it: has_more then says more records precede it.
      hasMore,
      ...(start.style === 'page' ? { page: { number: start.page, size: parsed.pageSize } } : {}),
    });
  };
};
