import { randomInt } from 'node:crypto';
import type { FieldPlan, ResourcePlan } from '../../plan/types.ts';
import type { RuntimeContext } from '../../runtime/context.ts';
import { type Row, StoreError } from '../../storage/index.ts';
import { derivedBase, isSlugOf, withSuffix } from './slug.ts';

/** Clashes a write meets before it gives up; the last attempts use a random suffix, not the next number. */
const MAX_ATTEMPTS = 8;
const NUMBERED_ATTEMPTS = 5;
/** Stored values read to find the next free suffix; past these the numbered guess may clash, and is retried. */
const SCAN_LIMIT = 1000;
/** The longest suffix a numbered or random guess takes (`-99999999`): the values it may clash with share the rest. */
const LONGEST_SUFFIX = 9;

type DerivedField = FieldPlan & { readonly derive: NonNullable<FieldPlan['derive']> };

/** What stores a record whose fields are derived: the insert and update of the record handlers. */
export interface DerivedWriter {
  /** Sets the derived fields of a new record and inserts it; a unique clash of one of them takes the next suffix. */
  insert(row: Row): Promise<void>;
  /**
   * Adds to `changes` the derived fields the changes call for (a source changed, and the field re-derives or has
   * no value yet), then updates the record like `Store.update`, taking the next suffix on a unique clash.
   */
  update(current: Row, changes: Record<string, unknown>, revision: number | undefined): Promise<Row | undefined>;
}

/**
 * Compiles the derived fields of a resource. The value is the slug of its source (or the resource's name when the
 * source gives none); a unique field takes the first of `base`, `base-2`, `base-3`… no record holds. Two writers
 * may pick the same value at once: the store's unique index refuses the second, whose write is undone alone (a
 * savepoint) and tried again with the next free value, a bounded number of times.
 */
export const createDerivedWriter = (ctx: RuntimeContext, resource: ResourcePlan): DerivedWriter => {
  const derived = resource.fields.filter((f): f is DerivedField => f.derive !== undefined);
  const baseOf = (f: DerivedField, source: unknown) => derivedBase(resource, f.derive, { [f.derive.from]: source });

  /** Values of `f` that start like every suffixed form of `base` would. */
  const takenLike = async (f: DerivedField, base: string): Promise<Set<string>> => {
    const stem = withSuffix(base, '-'.padEnd(LONGEST_SUFFIX, '9'), f.derive.maxLength).slice(0, -LONGEST_SUFFIX);
    const { rows } = await ctx.store.list(resource.name, {
      filters: [{ field: f.name, op: 'prefix', value: stem }],
      sort: [],
      limit: SCAN_LIMIT,
      count: false,
    });
    return new Set(rows.map((r) => r[f.name]).filter((v): v is string => typeof v === 'string'));
  };

  /** The value to try: the first free numbered form, or after NUMBERED_ATTEMPTS clashes a random one. */
  const pick = async (f: DerivedField, base: string, attempt: number): Promise<string> => {
    if (!f.unique) return base;
    if (attempt > NUMBERED_ATTEMPTS)
      return withSuffix(base, `-${randomInt(10_000_000, 100_000_000)}`, f.derive.maxLength);
    if (attempt === 1 && !(await ctx.store.exists(resource.name, f.name, base))) return base;
    const taken = await takenLike(f, base);
    if (!taken.has(base)) return base;
    for (let n = 2; ; n++) {
      const candidate = withSuffix(base, `-${n}`, f.derive.maxLength);
      if (!taken.has(candidate)) return candidate;
    }
  };

  /** Runs `write` until no derived field clashes, re-picking the field that did. */
  const retrying = async <T>(
    values: Record<string, unknown>,
    bases: ReadonlyMap<DerivedField, string>,
    write: () => Promise<T>,
  ): Promise<T> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await ctx.store.savepoint(write);
      } catch (error) {
        const clash = error instanceof StoreError && error.kind === 'unique' ? error.field : undefined;
        const field = [...bases.keys()].find((f) => f.name === clash);
        const base = field ? bases.get(field) : undefined;
        if (!field || base === undefined || attempt >= MAX_ATTEMPTS) throw error;
        values[field.name] = await pick(field, base, attempt + 1);
      }
    }
  };

  if (derived.length === 0) {
    return {
      insert: (row) => ctx.store.insert(resource.name, row),
      update: (current, changes, revision) =>
        ctx.store.update(resource.name, current.id, changes, revision === undefined ? {} : { revision }),
    };
  }

  return {
    async insert(row) {
      const bases = new Map(derived.map((f) => [f, baseOf(f, row[f.derive.from])] as const));
      for (const [f, base] of bases) row[f.name] = await pick(f, base, 1);
      await retrying(row, bases, () => ctx.store.insert(resource.name, row));
    },
    async update(current, changes, revision) {
      const bases = new Map<DerivedField, string>();
      for (const f of derived) {
        const missing = current[f.name] === null || current[f.name] === undefined;
        const sourceChanged = f.derive.from in changes && f.derive.onChange === 'rederive';
        if (!missing && !sourceChanged) continue;
        const base = baseOf(f, f.derive.from in changes ? changes[f.derive.from] : current[f.derive.from]);
        // A value that already is a form of the new base stays: renaming "Hello" to "hello" keeps hello-2.
        if (!missing && isSlugOf(current[f.name], base, f.derive.maxLength)) continue;
        bases.set(f, base);
        changes[f.name] = await pick(f, base, 1);
      }
      const expect = revision === undefined ? {} : { revision };
      if (bases.size === 0) return ctx.store.update(resource.name, current.id, changes, expect);
      return retrying(changes, bases, () => ctx.store.update(resource.name, current.id, changes, expect));
    },
  };
};
