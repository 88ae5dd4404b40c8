import type { FieldPlan, ResourcePlan } from '../../plan/types.ts';
import type { Condition, Filter, ListQuery } from '../store.ts';
import { type Dialect, escapeLike, quote } from './dialect.ts';

export interface ListSql {
  readonly select: string;
  readonly count?: string;
  /** Turns the query's values into the statement's parameters, in order. */
  readonly params: (query: ListQuery) => unknown[];
  readonly countParams: (query: ListQuery) => unknown[];
}

export const SYSTEM_COLUMNS: Readonly<Record<string, string>> = {
  id: 'id',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
  revision: 'revision',
};

const NUMERIC_TYPES = new Set(['integer', 'number', 'boolean', 'decimal']);

/** What a NULL sorts as, so that keyset pagination over nullable columns stays total and stable. */
export const nullSentinel = (field: FieldPlan | undefined): string | number =>
  field && NUMERIC_TYPES.has(field.type) ? -1.7976931348623157e308 : '';

const SQL_OPS = { eq: '=', ne: '<>', lt: '<', lte: '<=', gt: '>', gte: '>=' } as const;

/**
 * Renders a condition with bound values (`?` markers); the SQL text depends only on the condition's shape. TRUE and
 * FALSE are keywords on both backends (SQLite reads them as 1 and 0).
 */
export const conditionSql = (
  column: (field: string) => string,
  c: Condition,
  bind: (value: unknown) => unknown = (v) => v,
): { readonly sql: string; readonly params: unknown[] } => {
  switch (c.kind) {
    case 'const':
      return { sql: c.value ? 'TRUE' : 'FALSE', params: [] };
    case 'not': {
      const inner = conditionSql(column, c.item, bind);
      return { sql: `NOT (${inner.sql})`, params: inner.params };
    }
    case 'and':
    case 'or': {
      if (c.items.length === 0) return { sql: c.kind === 'and' ? 'TRUE' : 'FALSE', params: [] };
      const parts = c.items.map((item) => conditionSql(column, item, bind));
      return {
        sql: `(${parts.map((p) => p.sql).join(c.kind === 'and' ? ' AND ' : ' OR ')})`,
        params: parts.flatMap((p) => p.params),
      };
    }
    case 'compare': {
      const col = column(c.field);
      if (c.value === null || c.value === undefined) {
        return { sql: c.op === 'ne' ? `${col} IS NOT NULL` : c.op === 'eq' ? `${col} IS NULL` : 'FALSE', params: [] };
      }
      if (c.op === 'ne') return { sql: `(${col} IS NULL OR ${col} <> ?)`, params: [bind(c.value)] };
      return { sql: `${col} ${SQL_OPS[c.op]} ?`, params: [bind(c.value)] };
    }
    case 'in':
      if (c.values.length === 0) return { sql: 'FALSE', params: [] };
      return { sql: `${column(c.field)} IN (${c.values.map(() => '?').join(', ')})`, params: c.values.map(bind) };
  }
};

/** A stable key of a query's shape: statements are prepared once per shape. */
export const listShapeKey = (q: ListQuery): string =>
  `${q.where ? `${conditionSql(() => '', q.where).sql}|` : ''}${q.filters.map((f) => `${f.field}:${f.op}:${Array.isArray(f.value) ? f.value.length : 1}`).join(',')}|${q.sort
    .map((s) => `${s.desc ? '-' : ''}${s.field}`)
    .join(',')}|${q.after ? 'a' : ''}|${q.count ? 'c' : ''}${q.offset !== undefined ? '|o' : ''}`;

/**
 * A page size as it is written into a statement's text (Dialect.literalLimit): a whole number the runtime has
 * checked, never a client's text. The store's key of the statement's shape must then include it (PostgresStore.list).
 */
const literalLimit = (limit: number): number => {
  if (!Number.isSafeInteger(limit) || limit < 0) throw new TypeError(`a page size is a whole number, not ${limit}`);
  return limit;
};

/** More select expressions after the columns (computed columns, see computed-sql.ts) and their parameters. */
export interface ExtraSelect {
  readonly select: string;
  readonly params: (query: ListQuery) => readonly unknown[];
}

/** More WHERE clauses (related conditions, see related-sql.ts) and their parameters. */
export interface ExtraWhere {
  readonly clauses: readonly string[];
  readonly params: (query: ListQuery) => unknown[];
}

/**
 * Builds the SELECT of a list page. Field and operator names come only from the plan (allow-listed by the
 * runtime); every value is a bound parameter. Pagination is keyset over (sort keys…, id).
 */
export const buildListSql = (
  dialect: Dialect,
  resource: ResourcePlan,
  q: ListQuery,
  columns = '*',
  extra?: ExtraSelect,
  extraWhere?: ExtraWhere,
): ListSql => {
  const column = (name: string) => SYSTEM_COLUMNS[name] ?? resource.fieldsByName.get(name)?.column ?? name;
  const bind = dialect.bind;
  // Decimals compare and sort by value.
  const valueExpr = (name: string) => {
    const c = quote(column(name));
    return resource.fieldsByName.get(name)?.type === 'decimal' ? dialect.decimalValue(c) : c;
  };
  const sortExpr = (name: string) => {
    // Ids are ULIDs minted with the creation time: creation order is id order, the table's own order.
    if (name === 'createdAt') return 'id';
    const field = resource.fieldsByName.get(name);
    const c = field?.type === 'boolean' ? dialect.booleanValue(valueExpr(name)) : valueExpr(name);
    if (!field || field.required) return c;
    const sentinel = nullSentinel(field);
    return `coalesce(${c}, ${typeof sentinel === 'string' ? `''` : sentinel})`;
  };
  const where: string[] = [];
  const leading = q.sort[0]?.field ?? 'createdAt';
  // Strings compare exactly, as `=` and unique indexes do; the i- operators fold A–Z only (see the dialects).
  const filterClause = (f: Filter): string => {
    const type = resource.fieldsByName.get(f.field)?.type;
    const text = ['prefix', 'contains', 'ieq', 'iprefix', 'icontains'].includes(f.op);
    let c = text ? quote(column(f.field)) : valueExpr(f.field);
    // A range on a field the page is not sorted by: walking the table in sort order and testing each row beats
    // reading the range from the field's index and sorting it, for a page of LIMIT rows (equality filters keep the
    // index: (field, id) then also yields the id order).
    if (['gt', 'gte', 'lt', 'lte', 'ne'].includes(f.op) && f.field !== leading) c = dialect.unindexed(c);
    switch (f.op) {
      case 'eq':
        return `${c} = ?`;
      case 'ne':
        return `(${c} IS NULL OR ${c} <> ?)`;
      case 'gt':
        return `${c} > ?`;
      case 'gte':
        return `${c} >= ?`;
      case 'lt':
        return `${c} < ?`;
      case 'lte':
        return `${c} <= ?`;
      case 'in':
        return `${c} IN (${(f.value as unknown[]).map(() => '?').join(', ')})`;
      case 'prefix':
        return dialect.prefix(c).sql;
      case 'contains':
        return type === 'array' ? dialect.arrayContains(c) : dialect.contains(c);
      case 'ieq':
        return dialect.equalsFolded(c);
      case 'iprefix':
      case 'icontains':
        return dialect.likeFolded(c);
    }
  };
  for (const f of q.filters) where.push(filterClause(f));
  const ruleColumn = (name: string) => quote(column(name));
  if (q.where) where.push(conditionSql(ruleColumn, q.where, bind).sql);
  if (extraWhere) where.push(...extraWhere.clauses);
  const ruleParams = (query: ListQuery): unknown[] => [
    ...(query.where ? conditionSql(ruleColumn, query.where, bind).params : []),
    ...(extraWhere ? extraWhere.params(query) : []),
  ];
  const prefixParam = dialect.prefix('').param;
  const filterParams = (query: ListQuery): unknown[] =>
    query.filters.flatMap((f) => {
      switch (f.op) {
        case 'in':
          return f.value as unknown[];
        case 'prefix':
          return [prefixParam(String(f.value))];
        case 'iprefix':
          return [`${escapeLike(String(f.value))}%`];
        case 'icontains':
          return [`%${escapeLike(String(f.value))}%`];
        default:
          return [bind(f.value)];
      }
    });
  const sorted = q.sort.map((s) => ({ expr: sortExpr(s.field), desc: s.desc }));
  // The id breaks ties, unless the last sort key already is the id (createdAt sorts by id).
  const keys = sorted.at(-1)?.expr === 'id' ? sorted : [...sorted, { expr: 'id', desc: q.sort.at(-1)?.desc ?? false }];
  const countWhere = [...where];
  if (q.after) {
    // (k1 > v1) OR (k1 = v1 AND k2 > v2) OR … — works for any mix of directions.
    const ors = keys.map((key, i) => {
      const eqs = keys.slice(0, i).map((k) => `${k.expr} = ?`);
      return `(${[...eqs, `${key.expr} ${key.desc ? '<' : '>'} ?`].join(' AND ')})`;
    });
    where.push(`(${ors.join(' OR ')})`);
  }
  const table = quote(resource.table);
  const whereSql = where.length ? ` WHERE ${where.join(' AND ')}` : '';
  const order = keys.map((k) => `${k.expr} ${k.desc ? 'DESC' : 'ASC'}`).join(', ');
  const keysetParams = (after: readonly unknown[]): unknown[] =>
    keys.flatMap((_, i) => [...after.slice(0, i), after[i]]);
  const limit = dialect.literalLimit ? String(literalLimit(q.limit)) : dialect.limitMarker;
  return {
    select: dialect.placeholders(
      `SELECT ${columns}${extra ? `, ${extra.select}` : ''} FROM ${table}${whereSql} ORDER BY ${order} LIMIT ${limit}${q.offset !== undefined ? ' OFFSET ?' : ''}`,
    ),
    ...(q.count
      ? {
          count: dialect.placeholders(
            `SELECT count(*) AS n FROM ${table}${countWhere.length ? ` WHERE ${countWhere.join(' AND ')}` : ''}`,
          ),
        }
      : {}),
    params: (query) => [
      ...(extra ? extra.params(query) : []),
      ...filterParams(query),
      ...ruleParams(query),
      ...(query.after ? keysetParams(query.after) : []),
      ...(dialect.literalLimit ? [] : [query.limit]),
      ...(query.offset !== undefined ? [query.offset] : []),
    ],
    countParams: (query) => [...filterParams(query), ...ruleParams(query)],
  };
};

/** The values a keyset cursor records for a row: each sort key as the ORDER BY sees it, then the id. */
export const cursorValues = (resource: ResourcePlan, q: ListQuery, row: Record<string, unknown>): unknown[] => {
  const values = q.sort.map((s) => {
    if (s.field === 'createdAt') return row.id;
    const v = row[s.field];
    const field = resource.fieldsByName.get(s.field);
    if (v === null || v === undefined) return field && !field.required ? nullSentinel(field) : null;
    if (field?.type === 'decimal') return Number(v);
    return typeof v === 'boolean' ? (v ? 1 : 0) : v;
  });
  return q.sort.at(-1)?.field === 'createdAt' ? values : [...values, row.id];
};
