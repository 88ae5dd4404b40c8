import type { ResourcePlan } from '../../plan/types.ts';
import type { RelatedCondition, RelatedTerm } from '../store.ts';
import { comparableColumn, type Dialect, quote } from './dialect.ts';
import { SYSTEM_COLUMNS } from './list-sql.ts';

/** The WHERE clauses of related conditions (`EXISTS (…)`, one per condition) and how to bind their values. */
export interface RelatedSql {
  readonly clauses: readonly string[];
  /** The statement's parameters for these clauses, depth first, in the order the clauses name them. */
  readonly params: (conditions: readonly RelatedCondition[] | undefined) => unknown[];
}

const SQL_OPS = { eq: '=', ne: '<>', lt: '<', lte: '<=', gt: '>', gte: '>=' } as const;

const isVoid = (t: RelatedTerm) => 'value' in t && (t.value === null || t.value === undefined);

/** A key of the conditions' shape: the SQL depends on it only (resources, fields, operators, missing values). */
export const relatedShapeKey = (conditions: readonly RelatedCondition[] | undefined): string => {
  if (!conditions?.length) return '';
  const one = (c: RelatedCondition): string =>
    `${c.from}(${c.terms
      .map((t) =>
        'related' in t ? one(t.related) : `${t.field}${t.op}${'outer' in t ? `o.${t.outer}` : isVoid(t) ? '0' : '?'}`,
      )
      .join(',')})`;
  return `|r:${conditions.map(one).join(';')}`;
};

/**
 * Renders related conditions over the listed table as correlated `EXISTS` subqueries (semi-joins on both backends).
 * Resource, field and column names come from the plan only; every value is a bound parameter.
 */
export const buildRelatedSql = (
  dialect: Dialect,
  outer: ResourcePlan,
  conditions: readonly RelatedCondition[],
  resourceOf: (name: string) => ResourcePlan,
): RelatedSql => {
  const columnOf = (r: ResourcePlan, name: string) => SYSTEM_COLUMNS[name] ?? r.fieldsByName.get(name)?.column ?? name;
  let next = 0;
  const render = (c: RelatedCondition, enclosing: ResourcePlan, enclosingAlias: string): string => {
    const from = resourceOf(c.from);
    const alias = quote(`nf_r${next++}`);
    const terms = c.terms.map((t) => {
      if ('related' in t) return render(t.related, from, alias);
      if (isVoid(t)) return 'FALSE';
      const column = `${alias}.${quote(columnOf(from, t.field))}`;
      if (t.op === 'contains') return dialect.arrayContains(column);
      if (!('outer' in t)) return `${column} ${SQL_OPS[t.op]} ?`;
      const outer = `${enclosingAlias}.${quote(columnOf(enclosing, t.outer))}`;
      const left = comparableColumn(dialect, from, t.field, column, enclosing, t.outer);
      return `${left} ${SQL_OPS[t.op]} ${comparableColumn(dialect, enclosing, t.outer, outer, from, t.field)}`;
    });
    const where = terms.length ? ` WHERE ${terms.join(' AND ')}` : '';
    return `EXISTS (SELECT 1 FROM ${quote(from.table)} AS ${alias}${where})`;
  };
  const clauses = conditions.map((c) => render(c, outer, quote(outer.table)));
  const values = (c: RelatedCondition): unknown[] =>
    c.terms.flatMap((t) =>
      'related' in t ? values(t.related) : 'value' in t && !isVoid(t) ? [dialect.bind(t.value)] : [],
    );
  return { clauses, params: (conds) => (conds ?? []).flatMap(values) };
};
