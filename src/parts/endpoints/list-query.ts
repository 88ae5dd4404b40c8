import type { ResourcePlan, SortKey } from '../../plan/types.ts';
import type { Filter, FilterOp, ListQuery } from '../../storage/index.ts';
import { ApiError } from '../errors/api-error.ts';
import { normalizeFilterValue } from '../resources/normalize.ts';
import { isDateTime, isIsoDate } from '../resources/value-problem.ts';
import { isNumberText } from './coerce-query.ts';
import { type Filterable, operatorsFor, PARTIAL_MATCH, SYSTEM_FILTERABLE } from './filter-operators.ts';

export const RESERVED_QUERY = new Set(['limit', 'cursor', 'sort', 'expand', 'count']);
const MAX_CURSOR_CHARS = 2048;
const MAX_SORT_KEYS = 4;
const FILTER_KEY = /^([A-Za-z_][A-Za-z0-9_]*)(?:\[([a-z]+)\])?$/;

type QueryCode = 'invalid_filter' | 'invalid_query' | 'invalid_sort' | 'invalid_cursor' | 'invalid_expand';

/** A parameter given at most once: its text, '' when given empty, undefined when absent. */
const single = (name: string, value: string | string[] | undefined, code: QueryCode): string | undefined => {
  if (Array.isArray(value)) throw new ApiError(code, `${name.slice(0, 64)} is given more than once.`);
  return value;
};

/** A comma-separated list without empty items: `a,,b`, `a,` and `-` are mistakes. */
const items = (name: string, text: string, code: QueryCode): string[] => {
  const list = text.split(',').map((item) => item.trim());
  if (list.some((item) => item === '' || item === '-' || item === '+'))
    throw new ApiError(code, `${name} has an empty item: "${text.slice(0, 64)}".`);
  return list;
};

/** `sort=-age,name`: each key at most once, and never empty (`sort=`, `sort=,` and `sort=-` are 400). */
const parseSort = (text: string): SortKey[] => {
  const keys = items('sort', text, 'invalid_sort').map((s) =>
    s.startsWith('-') ? { field: s.slice(1), desc: true } : { field: s.replace(/^\+/, ''), desc: false },
  );
  if (keys.length > MAX_SORT_KEYS) throw new ApiError('invalid_sort', `Sort on at most ${MAX_SORT_KEYS} fields.`);
  const fields = keys.map((k) => k.field);
  const twice = fields.find((f, i) => fields.indexOf(f) !== i);
  if (twice !== undefined) throw new ApiError('invalid_sort', `"${twice.slice(0, 64)}" is sorted on twice.`);
  return keys;
};

/** A query-string value as the field's type, or 400 invalid_filter. */
const typedValue = (field: Filterable, name: string, raw: string): unknown => {
  const bad = () => new ApiError('invalid_filter', `"${raw.slice(0, 64)}" is not a valid value for ${name}.`);
  switch (field.type) {
    case 'integer': {
      if (!/^-?\d{1,16}$/.test(raw) || !Number.isSafeInteger(Number(raw))) throw bad();
      return Number(raw);
    }
    case 'number': {
      const n = Number(raw);
      if (!isNumberText(raw) || !Number.isFinite(n)) throw bad();
      return n;
    }
    case 'decimal': {
      if (!/^-?\d{1,30}(\.\d{1,18})?$/.test(raw)) throw bad();
      return Number(raw);
    }
    case 'boolean':
      if (raw === 'true') return true;
      if (raw === 'false') return false;
      throw bad();
    case 'enum':
      if (!field.spec.values?.includes(raw)) throw bad();
      return raw;
    case 'date':
      if (!isIsoDate(raw)) throw bad();
      return raw;
    case 'datetime':
      if (!isDateTime(raw)) throw bad();
      return raw;
    default:
      if (raw.length > 1024 || raw.includes('\u0000')) throw bad();
      return raw;
  }
};

export interface ParsedList {
  readonly query: ListQuery;
  readonly pageSize: number;
  readonly expand: readonly string[];
  readonly sortKey: string;
}

/** Parses and allow-lists a list request against the plan: only declared fields, operators and sorts pass. */
export const parseListQuery = (
  resource: ResourcePlan,
  query: Readonly<Record<string, string | string[] | undefined>>,
  parentFilters: Filter[],
  hidden: ReadonlySet<string> = new Set(),
): ParsedList => {
  // A field the caller may not read cannot be filtered or sorted on either: it answers as an unknown field would.
  const fieldOf = (name: string): Filterable | undefined =>
    hidden.has(name) ? undefined : (resource.fieldsByName.get(name) ?? SYSTEM_FILTERABLE[name]);
  const visible = (names: readonly string[]) => names.filter((n) => !hidden.has(n));
  const limitText = single('limit', query.limit, 'invalid_query');
  let pageSize = resource.list.pageSize.default;
  if (limitText !== undefined) {
    if (!/^\d{1,9}$/.test(limitText) || Number(limitText) < 1)
      throw new ApiError('invalid_query', 'limit must be a positive integer.');
    pageSize = Number(limitText);
    if (pageSize > resource.list.pageSize.max) {
      throw new ApiError('limit_exceeded', `limit may be at most ${resource.list.pageSize.max}.`, undefined, {
        maxLimit: resource.list.pageSize.max,
      });
    }
  }
  const sortText = single('sort', query.sort, 'invalid_query');
  const sort: SortKey[] = sortText !== undefined ? parseSort(sortText) : [...resource.list.defaultSort];
  for (const key of sort) {
    if (!resource.list.sort.includes(key.field) || !fieldOf(key.field)) {
      throw new ApiError(
        'invalid_sort',
        `Cannot sort on "${key.field.slice(0, 64)}"; sortable: ${visible(resource.list.sort).join(', ')}.`,
      );
    }
  }
  const filters: Filter[] = [...parentFilters];
  for (const [key, raw] of Object.entries(query)) {
    if (RESERVED_QUERY.has(key)) continue;
    const m = FILTER_KEY.exec(key);
    const name = m?.[1] ?? '';
    const field = fieldOf(name);
    if (!m || !field || !(resource.list.filter.includes(name) || name === 'id')) {
      throw new ApiError(
        'invalid_filter',
        `Cannot filter on "${key.slice(0, 64)}"; filterable: ${visible(resource.list.filter).join(', ') || 'none'}.`,
      );
    }
    const operators = operatorsFor(field);
    const op = (m[2] ?? 'eq') as FilterOp;
    if (!operators.includes(op)) {
      throw new ApiError(
        'invalid_filter',
        `${name} cannot be filtered with "${op.slice(0, 16)}"; its operators: ${operators.join(', ')}.`,
      );
    }
    const text = single(key, raw, 'invalid_filter') ?? '';
    if (text === '' && PARTIAL_MATCH.has(op) && field.type !== 'array')
      throw new ApiError('invalid_filter', `${key} needs a value: an empty one would match every record.`);
    if (op === 'in') {
      const parts = text.split(',');
      if (parts.length > 100) throw new ApiError('invalid_filter', 'in takes at most 100 values.');
      filters.push({ field: name, op, value: parts.map((p) => typedValue(field, name, p)) });
    } else if (field.type === 'array') {
      const items = field.spec.items;
      filters.push({
        field: name,
        op,
        value: items ? typedValue({ type: items.type, spec: items }, name, text) : text,
      });
    } else {
      filters.push({ field: name, op, value: typedValue(field, name, text) });
    }
  }
  // Values as the fields store them: `?email=A@B.COM` finds a@b.com when email declares `normalize: [lower]`.
  for (const [i, f] of filters.entries()) {
    const field = resource.fieldsByName.get(f.field);
    if (field) filters[i] = { ...f, value: normalizeFilterValue(field, f.op, f.value) };
  }
  const expandText = single('expand', query.expand, 'invalid_query');
  const expand = expandText !== undefined ? items('expand', expandText, 'invalid_expand') : [];
  for (const [i, e] of expand.entries()) {
    if (!resource.list.expand.includes(e)) throw new ApiError('invalid_expand', `Cannot expand "${e.slice(0, 64)}".`);
    if (expand.indexOf(e) !== i) throw new ApiError('invalid_expand', `"${e}" is expanded twice.`);
  }
  const countText = single('count', query.count, 'invalid_query');
  if (countText !== undefined && countText !== 'true' && countText !== 'false')
    throw new ApiError('invalid_query', 'count must be true or false.');
  const sortKey = sort.map((s) => `${s.desc ? '-' : ''}${s.field}`).join(',');
  const cursorText = single('cursor', query.cursor, 'invalid_query');
  const keysetLength = sort.at(-1)?.field === 'createdAt' ? sort.length : sort.length + 1;
  const after = cursorText !== undefined ? decodeCursor(cursorText, sortKey, keysetLength) : undefined;
  return {
    query: { filters, sort, ...(after ? { after } : {}), limit: pageSize + 1, count: countText === 'true' },
    pageSize,
    expand,
    sortKey,
  };
};

/** Cursors are opaque to clients: the sort they belong to and the keyset of the last row. */
export const encodeCursor = (sortKey: string, keyset: readonly unknown[]): string =>
  Buffer.from(JSON.stringify({ s: sortKey, k: keyset })).toString('base64url');

const decodeCursor = (text: string, sortKey: string, length: number): unknown[] => {
  const invalid = new ApiError('invalid_cursor', 'The cursor is malformed, expired, or belongs to another sort.');
  // An empty cursor is refused rather than read as the first page: a client looping on it would never end.
  if (text.length > MAX_CURSOR_CHARS || !/^[A-Za-z0-9_-]+$/.test(text)) throw invalid;
  try {
    const decoded = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as { s?: unknown; k?: unknown };
    const ok =
      decoded.s === sortKey &&
      Array.isArray(decoded.k) &&
      decoded.k.length === length &&
      decoded.k.every((v) => v === null || ['string', 'number'].includes(typeof v));
    if (!ok) throw invalid;
    return decoded.k as unknown[];
  } catch {
    throw invalid;
  }
};
