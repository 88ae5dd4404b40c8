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
  /** Sets each column's value on `row` from its raw row (an array row read from `offset` on, or an object row by alias). */
  readonly fill: (row: Record<string, unknown>, raw: unknown[] | Record<string, unknown>, offset: number) => void;
}

const SQL_OPS = { eq: '=', ne: '<>', lt: '<', lte: '<=', gt: '>', gte: '>=' } as const;

/** Whether a term compares with nothing: a missing value (an anonymous caller) never matches. */
const isVoid = (t: ComputedTerm) => 'value' in t && (t.value === null || t.value === undefined);

const shapeKeys = new WeakMap<readonly ComputedColumn[], string>();

/**
 * A key of the columns' shape: the SQL depends on it only (names, sources, fields and which values are missing).
 * Kept per array: the runtime hands the same columns to every request of one caller.
 */
export const computedShapeKey = (columns: readonly ComputedColumn[] | undefined): string => {
  if (!columns?.length) return '';
  const known = shapeKeys.get(columns);
  if (known !== undefined) return known;
  const key = `|x:${columns
    .map(
      (c) =>
        `${c.name}:${c.kind}:${c.tally ?? c.from}${c.less ? '-' : ''}(${c.terms.map((t) => `${t.field}${t.op}${'record' in t ? `r.${t.record}` : isVoid(t) ? '0' : '?'}`).join(',')})`,
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
  const aliases = columns.map((_, i) => alias(i));
  const parts = columns.map((c, i) => {
    const tally = c.tally && `${outerTable}.${quote(c.tally)}`;
    if (tally && !c.less) return `${tally} AS ${quote(alias(i))}`;
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
  const bound = new WeakMap<readonly ComputedColumn[], unknown[]>();
  return {
    select: parts.join(', '),
    params: (cols) => {
      let values = bound.get(cols);
      if (!values) {
        values = cols.flatMap((c) =>
          (c.tally && (!c.less || c.terms.some(isVoid)) ? [] : c.terms).flatMap((t) =>
            'value' in t && !isVoid(t) ? [dialect.bind(t.value)] : [],
          ),
        );
        bound.set(cols, values);
      }
      return values;
    },
    fill: (row, raw, offset) => {
      for (let i = 0; i < columns.length; i++) {
        const c = columns[i] as ComputedColumn;
        const v = Array.isArray(raw) ? raw[offset + i] : raw[aliases[i] as string];
        row[c.name] = c.kind === 'exists' ? v === true || v === 1 : Number(v ?? 0);
      }
    },
  };
};
