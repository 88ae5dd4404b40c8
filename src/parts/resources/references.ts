import type { ResourcePlan } from '../../plan/types.ts';
import type { RuntimeContext } from '../../runtime/context.ts';
import type { Principal } from '../auth/principal.ts';
import { ApiError, type FieldError } from '../errors/api-error.ts';

/**
 * 422 invalid_reference for every ref field whose target record does not exist, or that the caller may not
 * read: a reference must not tell a caller whether someone else's record exists.
 */
export const checkReferences = async (
  ctx: RuntimeContext,
  resource: ResourcePlan,
  values: Record<string, unknown>,
  principal: Principal | undefined,
): Promise<void> => {
  const missing: FieldError[] = [];
  for (const field of resource.fields) {
    const value = values[field.name];
    const target = field.ref ? ctx.plan.resourcesByName.get(field.ref.to) : undefined;
    if (!field.ref || !target || typeof value !== 'string') continue;
    const row = await ctx.store.get(target.name, value);
    if (!row || !ctx.access.canRead(target, principal, row)) {
      missing.push({
        pointer: `#/${field.name}`,
        code: 'invalid_reference',
        message: `no ${field.ref.to} has id ${value}`,
      });
    }
  }
  if (missing.length)
    throw new ApiError('invalid_reference', 'A reference points to a record that does not exist.', missing);
};

/** Applies each referencing field's onDelete rule before a record is deleted, inside the delete's transaction. */
export const releaseReferences = async (ctx: RuntimeContext, resource: ResourcePlan, id: string): Promise<void> => {
  for (const other of ctx.plan.resources) {
    for (const field of other.fields) {
      if (field.ref?.to !== resource.name) continue;
      if (field.ref.onDelete === 'restrict') {
        if (await ctx.store.exists(other.name, field.name, id)) {
          throw new ApiError(
            'reference_in_use',
            `${other.name} records still refer to this ${resource.name} (field ${field.name}).`,
          );
        }
        continue;
      }
      for (;;) {
        const { rows } = await ctx.store.list(other.name, {
          filters: [{ field: field.name, op: 'eq', value: id }],
          sort: [],
          limit: 500,
          count: false,
        });
        if (rows.length === 0) break;
        for (const row of rows) {
          if (field.ref.onDelete === 'cascade') {
            await releaseReferences(ctx, other, row.id);
            await ctx.store.delete(other.name, row.id);
          } else {
            await ctx.store.update(other.name, row.id, { [field.name]: null, updatedAt: ctx.now().toISOString() });
          }
        }
      }
    }
  }
};
