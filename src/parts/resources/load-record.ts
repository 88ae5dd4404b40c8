import type { ComputedFieldPlan, ResourcePlan } from '../../plan/types.ts';
import type { HandlerInput, RuntimeContext } from '../../runtime/context.ts';
import type { Row } from '../../storage/index.ts';
import type { Principal } from '../auth/principal.ts';
import { ApiError } from '../errors/api-error.ts';
import { byIds, withComputed } from './computed-runtime.ts';
import { etagOf, idPattern, parseIfMatch } from './record-io.ts';

/**
 * The record with this id if the caller may read it; undefined when it is missing or unreadable, alike. With
 * `computed`, the row carries those fields for the caller, read in the same query.
 */
export const createReadableLookup = (
  ctx: RuntimeContext,
  resource: ResourcePlan,
  computed: readonly ComputedFieldPlan[] = [],
) => {
  const ids = idPattern(resource);
  const read = readOf(ctx, resource, computed);
  return async (id: string, principal: Principal | undefined): Promise<Row | undefined> => {
    const row = ids.test(id) ? await read(id, principal) : undefined;
    return row && ctx.access.canRead(resource, principal, row) ? row : undefined;
  };
};

/** One record by id from the store, with `computed` for the caller when there are any (in the same query). */
const readOf = (
  ctx: RuntimeContext,
  resource: ResourcePlan,
  computed: readonly ComputedFieldPlan[],
): ((id: string, principal: Principal | undefined) => Promise<Row | undefined>) =>
  computed.length
    ? async (id, principal) =>
        (await ctx.store.list(resource.name, withComputed(byIds([id]), computed, principal))).rows[0]
    : (id) => ctx.store.get(resource.name, id);

export const notFound = (resource: ResourcePlan, id: string) =>
  new ApiError('not_found', `No ${resource.name} with id ${id}.`);

/**
 * Loads the record a request's path names, scoped to its parent path; anything else is 404 not_found. With
 * `computed`, those fields come with it in one query.
 */
export const createRecordLoader = (
  ctx: RuntimeContext,
  resource: ResourcePlan,
  computed: readonly ComputedFieldPlan[] = [],
) => {
  // The lookup above, inlined: one async function per request on the way to every record route's row.
  const ids = idPattern(resource);
  const read = readOf(ctx, resource, computed);
  const { parentParams } = resource;
  return async (input: HandlerInput): Promise<Row> => {
    const id = input.params.id ?? '';
    const { principal, params } = input;
    const row = ids.test(id) ? await read(id, principal) : undefined;
    // A record the caller may not read answers exactly like one that does not exist.
    if (
      !row ||
      !ctx.access.canRead(resource, principal, row) ||
      (parentParams.length > 0 && parentParams.some((p) => p.param in params && row[p.field] !== params[p.param]))
    )
      throw notFound(resource, id);
    return row;
  };
};

/** The revision a write must find (If-Match), or 412 precondition_failed when the client's copy is stale. */
export const expectRevision = (input: HandlerInput, row: Row): number => {
  const wanted = parseIfMatch(input.headers['if-match']);
  if (wanted === null || (wanted !== undefined && wanted !== row.revision)) {
    throw new ApiError(
      'precondition_failed',
      'The record has changed since the ETag you sent; read it again.',
      undefined,
      {
        currentEtag: etagOf(row),
      },
    );
  }
  return row.revision;
};

/**
 * The parents a nested path names (`/customers/{customerId}/addresses`) must exist and be readable by the caller:
 * otherwise 404, as for a record of the caller's own that does not exist.
 */
export const createParentCheck = (ctx: RuntimeContext, resource: ResourcePlan) => {
  const parents = resource.parentParams.flatMap((p) => {
    const target = ctx.plan.resourcesByName.get(resource.fieldsByName.get(p.field)?.ref?.to ?? '');
    return target ? [{ param: p.param, target, readable: createReadableLookup(ctx, target) }] : [];
  });
  return async (input: HandlerInput): Promise<void> => {
    for (const p of parents) {
      const id = input.params[p.param] ?? '';
      if (!(await p.readable(id, input.principal))) throw notFound(p.target, id);
    }
  };
};
