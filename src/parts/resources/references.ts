import type { ResourcePlan } from '../../plan/types.ts';
import type { RuntimeContext } from '../../runtime/context.ts';
import type { Principal } from '../auth/principal.ts';
import { ApiError, type FieldError } from '../errors/api-error.ts';
import type { FieldSpec } from './field-schema.ts';
import { idPattern } from './record-io.ts';

interface Reference {
  readonly pointer: string;
  readonly to: string;
  readonly id: string;
}

const escapePointer = (name: string) => name.replaceAll('~', '~0').replaceAll('/', '~1');

/** The field can hold a reference, at any depth (a ref, or an array or object with one inside). */
const mayReference = (spec: FieldSpec): boolean =>
  spec.type === 'ref' ||
  (spec.items !== undefined && mayReference(spec.items)) ||
  Object.values(spec.fields ?? {}).some(mayReference);

/** The resource has a field that can hold a reference: without one, checkReferences has nothing to do. */
export const holdsReferences = (resource: ResourcePlan): boolean => resource.fields.some((f) => mayReference(f.spec));

/** Every reference a value holds, at any depth: a ref field, refs in an array, refs in (arrays of) objects. */
const referencesIn = (spec: FieldSpec, value: unknown, pointer: string): Reference[] => {
  if (spec.type === 'ref') return spec.to && typeof value === 'string' ? [{ pointer, to: spec.to, id: value }] : [];
  const { items, fields } = spec;
  if (spec.type === 'array' && items && Array.isArray(value))
    return value.flatMap((item, i) => referencesIn(items, item, `${pointer}/${i}`));
  if (spec.type === 'object' && fields && typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const object = value as Record<string, unknown>;
    return Object.entries(fields).flatMap(([name, f]) =>
      Object.hasOwn(object, name) ? referencesIn(f, object[name], `${pointer}/${escapePointer(name)}`) : [],
    );
  }
  return [];
};

/**
 * 422 invalid_reference for every reference (a ref field, or a ref inside an array or object field) whose target
 * record does not exist, or that the caller may not read: a reference must not tell a caller whether someone
 * else's record exists.
 */
export const checkReferences = async (
  ctx: RuntimeContext,
  resource: ResourcePlan,
  values: Record<string, unknown>,
  principal: Principal | undefined,
): Promise<void> => {
  const references = resource.fields.flatMap((f) =>
    Object.hasOwn(values, f.name) ? referencesIn(f.spec, values[f.name], `#/${escapePointer(f.name)}`) : [],
  );
  const found = new Map<string, boolean>();
  const missing: FieldError[] = [];
  for (const { pointer, to, id } of references) {
    const target = ctx.plan.resourcesByName.get(to);
    if (!target) continue;
    const key = `${to}/${id}`;
    let readable = found.get(key);
    if (readable === undefined) {
      // Held until the write commits: a delete of the target waits for it, and then sees the reference.
      const row = idPattern(target).test(id) ? await ctx.store.get(target.name, id, 'reference') : undefined;
      readable = row ? ctx.access.canRead(target, principal, row) : false;
      found.set(key, readable);
    }
    if (!readable) missing.push({ pointer, code: 'invalid_reference', message: `no ${to} has id ${id}` });
  }
  if (missing.length)
    throw new ApiError('invalid_reference', 'A reference points to a record that does not exist.', missing);
};

/** Whether any field of any resource refers to records of `resource`. */
const isReferenced = (ctx: RuntimeContext, resource: ResourcePlan) =>
  ctx.plan.resources.some((other) => other.fields.some((field) => field.ref?.to === resource.name));

/**
 * Applies each referencing field's onDelete rule before a record is deleted, inside the delete's transaction. The
 * record is held for the delete first: a write referring to it that is under way is waited for (and then seen), and
 * one that comes later waits for the delete and finds no record (422 invalid_reference). With several writers
 * (PostgreSQL) a reference is never left pointing at a deleted record.
 */
export const releaseReferences = async (ctx: RuntimeContext, resource: ResourcePlan, id: string): Promise<void> => {
  if (!isReferenced(ctx, resource)) return;
  await ctx.store.get(resource.name, id, 'delete');
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
