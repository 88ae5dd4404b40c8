import type { FieldPlan, ResourcePlan } from '../../plan/types.ts';
import type { FilterOp } from '../../storage/index.ts';
import type { FieldSpec, NormalizeOp } from './field-schema.ts';

/** Rewrites one string; they run before validation, so that " A@B.com " is checked (and stored) as "a@b.com". */
const STRING_OPS: Readonly<Partial<Record<NormalizeOp, (s: string) => string>>> = {
  trim: (s) => s.trim(),
  lower: (s) => s.toLowerCase(),
  upper: (s) => s.toUpperCase(),
  collapseSpaces: (s) => s.replace(/\s+/g, ' '),
};

/** The normalisers that rewrite strings; the others (`dedupe`, `sort`) rewrite arrays. */
export const STRING_NORMALIZERS: ReadonlySet<NormalizeOp> = new Set(['trim', 'lower', 'upper', 'collapseSpaces']);
/** The item types `sort` orders: strings by UTF-16 code units (never by locale), numbers by value. */
export const SORTABLE_ITEMS: ReadonlySet<string> = new Set([
  'string',
  'enum',
  'ref',
  'date',
  'datetime',
  'integer',
  'number',
]);
/** Filters that compare part of a string: only the case of their value is normalised (trimming would change them). */
const PARTIAL: ReadonlySet<FilterOp> = new Set(['prefix', 'contains', 'iprefix', 'icontains']);
const CASE_OPS: ReadonlySet<NormalizeOp> = new Set(['lower', 'upper']);

const stringOps = (ops: readonly NormalizeOp[] | undefined): Array<(s: string) => string> =>
  (ops ?? []).flatMap((op) => STRING_OPS[op] ?? []);

const applyAll = (fns: ReadonlyArray<(s: string) => string>, s: string) => fns.reduce((v, fn) => fn(v), s);

const dedupe = (items: readonly unknown[]): unknown[] => {
  const seen = new Set<string>();
  return items.filter((item) => {
    const key = JSON.stringify(item);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
};

/** Items of one comparable kind in order; anything else is left as it is (validation has refused it already). */
const sorted = (items: readonly unknown[]): readonly unknown[] => {
  if (items.every((i) => typeof i === 'string')) return [...items].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  if (items.every((i) => typeof i === 'number')) return [...items].sort((a, b) => a - b);
  return items;
};

type Rewrite = (value: unknown) => unknown;

/** Whether the field, or a field or item nested in it, declares a normaliser of this phase. */
const declares = (spec: FieldSpec, phase: 'input' | 'arrays'): boolean =>
  (spec.normalize ?? []).some((op) => STRING_NORMALIZERS.has(op) === (phase === 'input')) ||
  (spec.items !== undefined && declares(spec.items, phase)) ||
  Object.values(spec.fields ?? {}).some((f) => declares(f, phase));

/**
 * The rewrite of one field's values in one phase, compiled once; undefined when nothing in the field normalises.
 * `input`: the string normalisers, on the field's string, on each string item of an array (an array's own string
 * normalisers apply to its items) and inside objects. `arrays`: `dedupe` and `sort`, on validated values.
 */
const compileRewrite = (spec: FieldSpec, phase: 'input' | 'arrays', inherited: Array<(s: string) => string> = []) => {
  if (!declares(spec, phase) && inherited.length === 0) return undefined;
  const own = phase === 'input' ? [...inherited, ...stringOps(spec.normalize)] : [];
  const ops = spec.normalize ?? [];
  const items = spec.items
    ? compileRewrite(spec.items, phase, phase === 'input' && spec.type === 'array' ? own : [])
    : undefined;
  const fields = Object.entries(spec.fields ?? {}).flatMap(([name, f]) => {
    const rewrite = compileRewrite(f, phase);
    return rewrite ? [[name, rewrite] as const] : [];
  });
  const rewrite: Rewrite = (value) => {
    if (typeof value === 'string') return own.length && spec.type !== 'array' ? applyAll(own, value) : value;
    if (Array.isArray(value)) {
      let out: readonly unknown[] = items ? value.map(items) : value;
      if (phase === 'arrays') {
        if (ops.includes('dedupe')) out = dedupe(out);
        if (ops.includes('sort')) out = sorted(out);
      }
      return out;
    }
    if (value !== null && typeof value === 'object' && fields.length) {
      const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
      for (const [name, fn] of fields) if (out[name] !== undefined) out[name] = fn(out[name]);
      return out;
    }
    return value;
  };
  return rewrite;
};

/** The normalisers of one resource, compiled once: applied wherever a value enters (bodies, record doors, filters). */
export interface ResourceNormalizer {
  /** True when any field of the resource normalises: else both rewrites give back what they got. */
  readonly active: boolean;
  /** A body with the string normalisers applied, before validation: a new object, the body given is left alone. */
  input(body: unknown): unknown;
  /** Validated values with `dedupe` and `sort` applied, in place. */
  arrays(values: Record<string, unknown>): void;
}

export const createNormalizer = (resource: ResourcePlan): ResourceNormalizer => {
  const compile = (phase: 'input' | 'arrays') =>
    resource.fields.flatMap((f) => {
      const rewrite = compileRewrite(f.spec, phase);
      return rewrite ? [[f.name, rewrite] as const] : [];
    });
  const inputs = compile('input');
  const arrays = compile('arrays');
  return {
    active: inputs.length + arrays.length > 0,
    input(body) {
      if (inputs.length === 0 || body === null || typeof body !== 'object' || Array.isArray(body)) return body;
      const out: Record<string, unknown> = { ...(body as Record<string, unknown>) };
      for (const [name, fn] of inputs) if (Object.hasOwn(out, name)) out[name] = fn(out[name]);
      return out;
    },
    arrays(values) {
      for (const [name, fn] of arrays)
        if (values[name] !== undefined && values[name] !== null) values[name] = fn(values[name]);
    },
  };
};

/**
 * A list filter's value as the field stores it: `?email=A@B.COM` finds `a@b.com` when the field declares `lower`.
 * A whole-value comparison gets every string normaliser; a partial match (`prefix`, `contains`) only the case ones.
 * On an array field `contains` is membership, a whole-item comparison.
 */
export const normalizeFilterValue = (
  field: Pick<FieldPlan, 'type' | 'spec'>,
  op: FilterOp,
  value: unknown,
): unknown => {
  const spec = field.spec;
  const declared =
    spec.type === 'array' ? [...(spec.normalize ?? []), ...(spec.items?.normalize ?? [])] : (spec.normalize ?? []);
  const partial = spec.type !== 'array' && PARTIAL.has(op);
  const fns = stringOps(declared.filter((op) => !partial || CASE_OPS.has(op)));
  if (fns.length === 0) return value;
  const one = (v: unknown) => (typeof v === 'string' ? applyAll(fns, v) : v);
  return Array.isArray(value) ? value.map(one) : one(value);
};
