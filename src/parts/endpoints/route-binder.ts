import type { BoundPath, ResourcePlan } from '../../plan/types.ts';
import type { Handler, HandlerInput, RuntimeContext } from '../../runtime/context.ts';
import type { Row } from '../../storage/index.ts';
import { ApiError } from '../errors/api-error.ts';
import { idPattern } from '../resources/record-io.ts';
import { createKeyLookup, notFoundByKey } from '../resources/record-keys.ts';

/**
 * Turns a route's path parameters into what the record handlers take: the record's id as `id` and each parent's id
 * under the collection's own parameter name. Parents and the record named by natural keys are looked up here; one
 * that is missing or that the caller may not read is 404, alike.
 */
export const compileRouteBinder = (
  ctx: RuntimeContext,
  resource: ResourcePlan,
  route: BoundPath,
): ((input: HandlerInput) => Promise<HandlerInput>) | undefined => {
  if (route.plain) return undefined;
  const keys = createKeyLookup(ctx);
  const targetOf = (field: string) =>
    ctx.plan.resourcesByName.get(resource.fieldsByName.get(field)?.ref?.to ?? '') as ResourcePlan;
  const parents = route.binding.parents.map((group) => ({
    ...group,
    target: targetOf(group.field),
    canonical: resource.parentParams.find((p) => p.field === group.field)?.param,
  }));
  const itemFields = resource.key.filter((k) => !parents.some((g) => g.field === k));
  const readable = (r: ResourcePlan, input: HandlerInput, row: Row | undefined) =>
    row && ctx.access.canRead(r, input.principal, row) ? row : undefined;
  /** The parents the handlers check, taken from the record when this route does not name them. */
  const withParentsOf = (row: Row, params: Record<string, string>) => {
    for (const p of resource.parentParams) params[p.param] ??= String(row[p.field] ?? '');
  };

  const self = async (input: HandlerInput): Promise<Record<string, string>> => {
    const subject = input.principal?.subject ?? '';
    const byId = idPattern(resource).test(subject) ? await ctx.store.get(resource.name, subject) : undefined;
    const row = byId ?? (subject && resource.key.length === 1 ? await keys.find(resource, [subject]) : undefined);
    const mine = readable(resource, input, row);
    if (!mine) throw new ApiError('not_found', `No ${resource.name} for this caller.`);
    const params = { id: mine.id };
    withParentsOf(mine, params);
    return params;
  };

  const bound = async (input: HandlerInput): Promise<Record<string, string>> => {
    const params: Record<string, string> = {};
    const given: Record<string, string> = {};
    for (const group of parents) {
      const values = group.params.map((p) => input.params[p] ?? '');
      const row = readable(group.target, input, await keys.find(group.target, values));
      if (!row) throw notFoundByKey(group.target, values);
      given[group.field] = row.id;
      if (group.canonical) params[group.canonical] = row.id;
    }
    const named = route.binding.item.map((p) => input.params[p] ?? '');
    if (named.length === 0) return params;
    if (resource.key.length === 0) {
      params.id = named[0] ?? '';
      return params;
    }
    const row = readable(resource, input, await keys.find(resource, named, given));
    if (!row) throw notFoundByKey(resource, named, itemFields);
    params.id = row.id;
    withParentsOf(row, params);
    return params;
  };

  const bind = route.self ? self : bound;
  return async (input) => ({ ...input, params: await bind(input) });
};

/** The handler behind a route's binder: as it is when the route needs none. */
export const boundHandler = (ctx: RuntimeContext, resource: ResourcePlan, route: BoundPath, handler: Handler) => {
  const bind = compileRouteBinder(ctx, resource, route);
  return bind ? async (input: HandlerInput) => handler(await bind(input)) : handler;
};
