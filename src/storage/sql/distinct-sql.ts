import type { ResourcePlan } from '../../plan/types.ts';
import type { DistinctQuery } from '../store.ts';
import { type Dialect, quote } from './dialect.ts';
import { conditionSql, SYSTEM_COLUMNS } from './list-sql.ts';
import { buildRelatedSql, relatedShapeKey } from './related-sql.ts';

export interface DistinctSql {
  readonly select: string;
  readonly params: (query: DistinctQuery) => unknown[];
}

/** A key of the query's shape: statements are prepared once per shape. */
export const distinctShapeKey = (q: DistinctQuery): string =>
  `d:${q.field}|${q.where ? conditionSql(() => '', q.where).sql : ''}${relatedShapeKey(q.related)}|${q.order}${q.desc ? '-' : ''}`;

/**
 * The distinct values of a field (every item of an array field) over the records the conditions keep, with how
 * many records hold each: `SELECT value, count(DISTINCT id) … GROUP BY value ORDER BY … LIMIT ? OFFSET ?`.
 */
export const buildDistinctSql = (
  dialect: Dialect,
  resource: ResourcePlan,
  q: DistinctQuery,
  resourceOf: (name: string) => ResourcePlan,
): DistinctSql => {
  const table = quote(resource.table);
  const field = resource.fieldsByName.get(q.field);
  const column = `${table}.${quote(SYSTEM_COLUMNS[q.field] ?? field?.column ?? q.field)}`;
  const array = field?.type === 'array';
  const value = array ? 'nf_e.value' : column;
  const from = array ? `${table}, ${dialect.arrayItems(column)}` : table;
  const where = [`${value} IS NOT NULL`];
  const ruleColumn = (name: string) =>
    `${table}.${quote(SYSTEM_COLUMNS[name] ?? resource.fieldsByName.get(name)?.column ?? name)}`;
  if (q.where) where.push(conditionSql(ruleColumn, q.where, dialect.bind).sql);
  const related = q.related?.length ? buildRelatedSql(dialect, resource, q.related, resourceOf) : undefined;
  if (related) where.push(...related.clauses);
  const text = array
    ? field?.spec.items?.type !== 'integer' && field?.spec.items?.type !== 'number'
    : ['string', 'enum', 'ref'].includes(field?.type ?? 'string');
  const byValue = text ? dialect.byCodePoint(value) : value;
  const dir = q.desc ? 'DESC' : 'ASC';
  const order = q.order === 'count' ? `nf_count ${dir}, ${byValue} ASC` : `${byValue} ${dir}`;
  const select = dialect.placeholders(
    `SELECT ${value} AS nf_value, CAST(count(DISTINCT ${table}."id") AS INTEGER) AS nf_count FROM ${from} WHERE ${where.join(' AND ')} GROUP BY ${value} ORDER BY ${order} LIMIT ${dialect.limitMarker} OFFSET ?`,
  );
  return {
    select,
    params: (query) => [
      ...(query.where ? conditionSql(ruleColumn, query.where, dialect.bind).params : []),
      ...(related ? related.params(query.related) : []),
      query.limit,
      query.offset,
    ],
  };
};
