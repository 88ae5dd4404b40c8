import type { ResourcePlan } from '../../plan/types.ts';
import type { Handler, RuntimeContext } from '../../runtime/context.ts';
import type { Filter, Row } from '../../storage/index.ts';
import { createRecordWriter } from '../resources/record-io.ts';
import { encodeCursor, parseListQuery } from './list-query.ts';

/** Compiles the list handler of a resource: `{data, nextCursor}` (and `total` with count=true). */
export const compileListHandler = (ctx: RuntimeContext, resource: ResourcePlan): Handler => {
  const writer = createRecordWriter(resource);
  const writers = new Map(ctx.plan.resources.map((r) => [r.name, createRecordWriter(r)]));
  return async (input) => {
    const parents: Filter[] = resource.parentParams.map((p) => ({
      field: p.field,
      op: 'eq',
      value: input.params[p.param] ?? '',
    }));
    const parsed = parseListQuery(resource, input.query, parents);
    const result = await ctx.store.list(resource.name, parsed.query);
    const page = result.rows.slice(0, parsed.pageSize);
    const last = page.at(-1);
    const nextCursor =
      result.rows.length > parsed.pageSize && last
        ? encodeCursor(parsed.sortKey, ctx.store.keysetOf(resource.name, parsed.query, last))
        : null;
    const data: Array<Record<string, unknown>> = page.map(writer.toApi);
    for (const name of parsed.expand) {
      const to = resource.fieldsByName.get(name)?.ref?.to;
      const targetWriter = to ? writers.get(to) : undefined;
      if (!to || !targetWriter) continue;
      const ids = [...new Set(page.map((r) => r[name]).filter((v): v is string => typeof v === 'string'))];
      const targets = new Map((await ctx.store.getMany(to, ids)).map((r: Row) => [r.id, targetWriter.toApi(r)]));
      for (const record of data)
        if (typeof record[name] === 'string') record[name] = targets.get(record[name] as string) ?? record[name];
    }
    const body = JSON.stringify({ data, nextCursor, ...(result.total !== undefined ? { total: result.total } : {}) });
    return { status: 200, body, headers: { 'content-type': 'application/json; charset=utf-8' } };
  };
};
