import type { ResourcePlan } from '../../plan/types.ts';
import type { ComputedColumn, ComputedTerm } from '../store.ts';
import { comparableColumn, type Dialect, quote } from './dialect.ts';
import { SYSTEM_COLUMNS } from './list-sql.ts';

/** The extra select expressions of a list query: computed columns as correlated subqueries, and their values. */
export interface ComputedSql {
  /** `COALESCE((SELECT 1 … LIMIT 1), 0) AS "nf_computed_0", (SELECT count(*) …) AS "nf_computed_1"`, `?` markers. */
  readonly select: string;
  /** The statement's parameters for these expressions (they come first: the select list precedes the WHERE). */
  readonly params: (columns: readonly ComputedColumn[]) => readonly unknown[];
  /**
   * Each column's entry of a compiled row reader's object literal (`"favorited": <expression>,`), reading the raw
   * values with `at(slot, alias)`: `slot` is the select expression's place among these (array rows), `alias` its name
   * (object rows).
   */
  readonly reads: (at: (slot: number, alias: string) => string) => string[];
}

const SQL_OPS = { eq: '=', ne: '<>', lt: '<', lte: '<=', gt: '>', gte: '>=' } as const;

/** Whether a term compares with nothing: a missing value (an anonymous caller) never matches. */
const isVoid = (t: ComputedTerm) => 'value' in t && (t.value === null || t.value === undefined);

const sameTerm = (a: ComputedTerm, b: ComputedTerm) =>
  a.field === b.field &&
  a.op === b.op &&
  ('record' in a
    ? 'record' in b && a.record === b.record
    : !('record' in b) && !isVoid(a) && Object.is(a.value, b.value));

/**
 * For each column, the `exists` column that probes the same records (the same resource, the same terms, the same
 * values), or -1. A count of records a unique index allows one of at most is that probe's hit: one probe per row
 * instead of two (a favourite's `favorited` and the favourites by others, the tally less the caller's own).
 */
const twinsOf = (columns: readonly ComputedColumn[]): number[] =>
  columns.map((c, i) =>
    c.kind !== 'count' || (c.tally && !c.less)
      ? -1
      : columns.findIndex(
          (e, j) =>
            j !== i &&
            e.kind === 'exists' &&
            e.from === c.from &&
            e.terms.length === c.terms.length &&
            e.terms.every((t) => c.terms.some((u) => sameTerm(t, u))),
        ),
  );

/** Whether `eq` terms on these fields pin one record at most: the id, a unique field, or every field of a unique index. */
const pinsOne = (from: ResourcePlan, terms: readonly ComputedTerm[]) => {
  const pinned = new Set(terms.filter((t) => t.op === 'eq').map((t) => t.field));
  return (
    pinned.has('id') ||
    from.fields.some((f) => f.unique && pinned.has(f.name)) ||
    from.indexes.some((ix) => ix.unique && ix.fields.every((f) => pinned.has(f)))
  );
};

const shapeKeys = new WeakMap<readonly ComputedColumn[], string>();

/**
 * A key of the columns' shape: the SQL depends on it only (names, sources, fields and which values are missing).
 * Kept per array: the runtime hands the same columns to every request of one caller.
 */
export const computedShapeKey = (columns: readonly ComputedColumn[] | undefined): string => {
  if (!columns?.length) return '';
  const known = shapeKeys.get(columns);
  if (known !== undefined) return known;
  // Which columns probe the same records depends on the values too: the key says so (the SQL reads one probe for both).
  const twins = twinsOf(columns);
  const key = `|x:${columns
    .map(
      (c, i) =>
        `${c.name}:${c.kind}:${c.tally ?? c.from}${c.less ? '-' : ''}(${c.terms.map((t) => `${t.field}${t.op}${'record' in t ? `r.${t.record}` : isVoid(t) ? '0' : '?'}`).join(',')})${twins[i] === -1 ? '' : `=${twins[i]}`}`,
    )
    .join(';')}`;
  shapeKeys.set(columns, key);
  return key;
};

export const alias = (i: number) => `nf_computed_${i}`;

/**
 * Builds the correlated subqueries of computed columns over the listed table. Resource, field and column names come
 * from the plan only; every value is a bound parameter. The counted table is aliased, so a resource may count its
 * own records (`count(Article, a, a.parent == record.id)`).
 */
export const buildComputedSql = (
  dialect: Dialect,
  outer: ResourcePlan,
  columns: readonly ComputedColumn[],
  resourceOf: (name: string) => ResourcePlan,
): ComputedSql => {
  const columnOf = (r: ResourcePlan, name: string) => SYSTEM_COLUMNS[name] ?? r.fieldsByName.get(name)?.column ?? name;
  const outerTable = quote(outer.table);
  // A count whose twin probe pins one record at most reads that probe's hit: no subquery of its own.
  const twins = twinsOf(columns).map((j, i) =>
    j !== -1 && pinsOne(resourceOf((columns[i] as ComputedColumn).from), (columns[i] as ComputedColumn).terms) ? j : -1,
  );
  const parts = columns.map((c, i) => {
    const tally = c.tally && `${outerTable}.${quote(c.tally)}`;
    if (tally && (!c.less || twins[i] !== -1)) return `${tally} AS ${quote(alias(i))}`;
    if (twins[i] !== -1) return undefined;
    // A comparison with a missing value never holds: the count the tally is taken from is then 0.
    if (tally && c.terms.some(isVoid)) return `0 AS ${quote(alias(i))}`;
    const from = resourceOf(c.from);
    const inner = quote(`nf_c${i}`);
    const terms = c.terms.map((t) => {
      if (isVoid(t)) return 'FALSE';
      const left = `${inner}.${quote(columnOf(from, t.field))}`;
      if (!('record' in t)) return `${left} ${SQL_OPS[t.op]} ?`;
      const right = `${outerTable}.${quote(columnOf(outer, t.record))}`;
      // PostgreSQL: a reference to an integer id is text, the id bigint.
      const l = comparableColumn(dialect, from, t.field, left, outer, t.record);
      return `${l} ${SQL_OPS[t.op]} ${comparableColumn(dialect, outer, t.record, right, from, t.field)}`;
    });
    const where = terms.length ? ` WHERE ${terms.join(' AND ')}` : '';
    const body = `FROM ${quote(from.table)} AS ${inner}${where}`;
    // Not `EXISTS (…)`: PostgreSQL may run an EXISTS in the select list as a hashed subplan that reads every
    // matching row of the counted table (all of the caller's favourites) before the page's first row, 40 ms instead
    // of 0.2 for a page of 20; a scalar subquery with LIMIT 1 stays a per-row index probe on both backends.
    if (tally) return `(${tally} - (SELECT CAST(count(*) AS INTEGER) ${body})) AS ${quote(alias(i))}`;
    return c.kind === 'exists'
      ? `COALESCE((SELECT 1 ${body} LIMIT 1), 0) AS ${quote(alias(i))}`
      : `(SELECT CAST(count(*) AS INTEGER) ${body}) AS ${quote(alias(i))}`;
  });
  // The place of each column's expression among those selected (-1: none, it reads its twin's).
  let next = 0;
  const slots = parts.map((p) => (p === undefined ? -1 : next++));
  const bound = new WeakMap<readonly ComputedColumn[], unknown[]>();
  return {
    select: parts.filter((p) => p !== undefined).join(', '),
    params: (cols) => {
      let values = bound.get(cols);
      if (!values) {
        values = cols.flatMap((c, i) =>
          (c.tally && (!c.less || c.terms.some(isVoid))) || twins[i] !== -1
            ? []
            : c.terms.flatMap((t) => ('value' in t && !isVoid(t) ? [dialect.bind(t.value)] : [])),
        );
        bound.set(cols, values);
      }
      return values;
    },
    reads: (at) => {
      // SQLite answers 1 or 0, PostgreSQL the integer of `COALESCE((SELECT 1 …), 0)`.
      const hit = (i: number) => `(${at(slots[i] as number, alias(i))} === 1)`;
      return columns.map((c, i) => {
        const raw = slots[i] === -1 ? '' : at(slots[i] as number, alias(i));
        const twin = twins[i] as number;
        const value =
          c.kind === 'exists'
            ? hit(i)
            : twin === -1
              ? `Number(${raw} ?? 0)`
              : c.tally
                ? `Number(${raw} ?? 0) - (${hit(twin)} ? 1 : 0)`
                : `(${hit(twin)} ? 1 : 0)`;
        return `${JSON.stringify(c.name)}: ${value},`;
      });
    },
  };
};
