import type { PagingStyle, ResourcePlan, SortKey, WireNames } from '../../plan/types.ts';
import type { Filter, FilterOp, ListQuery, RelatedCondition } from '../../storage/index.ts';
import { ApiError } from '../errors/api-error.ts';
import { normalizeFilterValue } from '../resources/normalize.ts';
import { parseExpand } from './expand-query.ts';
import { type Filterable, operatorsFor, PARTIAL_MATCH, SYSTEM_FILTERABLE } from './filter-operators.ts';
import { declaredValue, typedValue, withRelated } from './query-values.ts';

export { withRelated } from './query-values.ts';

export const RESERVED_QUERY = new Set(['limit', 'cursor', 'sort', 'expand', 'expand[]', 'count']);
/** The query parameters each paging style reads itself (the rest are filters). */
export const PAGING_PARAMS: Readonly<Record<PagingStyle, readonly string[]>> = {
  cursor: ['limit', 'cursor', 'count'],
  offset: ['limit', 'offset'],
  page: ['page', 'per_page'],
  starting_after: ['limit', 'starting_after', 'ending_before'],
};
const RESERVED_BY_STYLE = Object.fromEntries(
  Object.entries(PAGING_PARAMS).map(([style, params]) => [style, new Set([...params, 'sort', 'expand', 'expand[]'])]),
) as unknown as Record<PagingStyle, ReadonlySet<string>>;
/** The deepest row an offset may start at: past it a page costs a scan of the table. */
export const MAX_OFFSET = 1_000_000;
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

/** Where a page starts, as the paging style reads it from the query. */
export type PageStart =
  | { readonly style: 'cursor' }
  | { readonly style: 'offset'; readonly offset: number }
  | { readonly style: 'page'; readonly page: number }
  | { readonly style: 'starting_after'; readonly startingAfter?: string; readonly endingBefore?: string };

export interface ParsedList {
  query: ListQuery;
  readonly pageSize: number;
  readonly expand: readonly string[];
  readonly sortKey: string;
  readonly start: PageStart;
}

/** A paging parameter that is wrong: 400 with the parameter named (`param`), for every style but cursor's. */
const badParam = (param: string, detail: string, code: QueryCode | 'limit_exceeded' = 'invalid_query', more = {}) =>
  new ApiError(code, detail, undefined, { param, ...more });

/** A whole number from `min` to `max` given as a query parameter, or undefined when absent. */
const wholeNumber = (param: string, raw: string | string[] | undefined, min: number, max: number) => {
  if (Array.isArray(raw)) throw badParam(param, `${param} is given more than once.`);
  if (raw === undefined) return undefined;
  if (!/^\d{1,9}$/.test(raw) || Number(raw) < min)
    throw badParam(param, `${param} must be an integer of at least ${min}.`);
  if (Number(raw) > max) throw badParam(param, `${param} may be at most ${max}.`);
  return Number(raw);
};

const ID_TEXT = /^[A-Za-z0-9_-]{1,255}$/;

/** Reads where the page starts, and its size, for a paging style other than cursor. */
const parseStart = (
  resource: ResourcePlan,
  query: Readonly<Record<string, string | string[] | undefined>>,
): { start: PageStart; pageSize?: number } => {
  const style = resource.wire.paging;
  const { max } = resource.list.pageSize;
  const sizeParam = style === 'page' ? 'per_page' : 'limit';
  const raw = query[sizeParam];
  if (typeof raw === 'string' && /^\d{1,9}$/.test(raw) && Number(raw) > max)
    throw badParam(sizeParam, `${sizeParam} may be at most ${max}.`, 'limit_exceeded', { maxLimit: max });
  const pageSize = wholeNumber(sizeParam, raw, 1, max);
  const sized = pageSize === undefined ? {} : { pageSize };
  if (style === 'offset')
    return { start: { style, offset: wholeNumber('offset', query.offset, 0, MAX_OFFSET) ?? 0 }, ...sized };
  if (style === 'page') {
    const size = pageSize ?? resource.list.pageSize.default;
    return {
      start: { style, page: wholeNumber('page', query.page, 1, Math.floor(MAX_OFFSET / size) + 1) ?? 1 },
      ...sized,
    };
  }
  const id = (param: string) => {
    const value = query[param];
    if (Array.isArray(value)) throw badParam(param, `${param} is given more than once.`);
    if (value !== undefined && !ID_TEXT.test(value)) throw badParam(param, `${param} must be the id of a record.`);
    return value;
  };
  const startingAfter = id('starting_after');
  const endingBefore = id('ending_before');
  if (startingAfter !== undefined && endingBefore !== undefined)
    throw badParam('ending_before', 'Give starting_after or ending_before, not both.');
  return {
    start: {
      style: 'starting_after',
      ...(startingAfter !== undefined ? { startingAfter } : {}),
      ...(endingBefore !== undefined ? { endingBefore } : {}),
    },
    ...sized,
  };
};

/** Parses and allow-lists a list request against the plan: only declared fields, operators and sorts pass. */
export const parseListQuery = (
  resource: ResourcePlan,
  query: Readonly<Record<string, string | string[] | undefined>>,
  parentFilters: Filter[],
  hidden: ReadonlySet<string> = new Set(),
): ParsedList => {
  const names: WireNames = resource.wire.names;
  const style = resource.wire.paging;
  const reserved = RESERVED_BY_STYLE[style];
  // Names arrive as the wire spells them; a field's engine name that the wire spells otherwise is no name at all.
  const engine = (name: string): string => names.in.get(name)?.name ?? (names.out.has(name) ? '\u0000' : name);
  const wire = (name: string): string => names.out.get(name)?.name ?? name;
  // A field the caller may not read cannot be filtered or sorted on either: it answers as an unknown field would.
  const fieldOf = (name: string): Filterable | undefined =>
    hidden.has(name) ? undefined : (resource.fieldsByName.get(name) ?? SYSTEM_FILTERABLE[name]);
  const visible = (list: readonly string[]) => list.filter((n) => !hidden.has(n)).map(wire);
  const paged = style === 'cursor' ? { start: { style } as PageStart } : parseStart(resource, query);
  const limitText = style === 'cursor' ? single('limit', query.limit, 'invalid_query') : undefined;
  let pageSize = paged.pageSize ?? resource.list.pageSize.default;
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
  const sort: SortKey[] =
    sortText !== undefined
      ? parseSort(sortText).map((k) => ({ ...k, field: engine(k.field) }))
      : [...resource.list.defaultSort];
  for (let i = 0; i < sort.length; i++) {
    const key = sort[i] as SortKey;
    if (!resource.list.sort.includes(key.field) || !fieldOf(key.field)) {
      const named = sortText !== undefined ? (parseSort(sortText)[i]?.field ?? key.field) : key.field;
      throw new ApiError(
        'invalid_sort',
        `Cannot sort on "${named.slice(0, 64)}"; sortable: ${visible(resource.list.sort).join(', ')}.`,
      );
    }
  }
  const filters: Filter[] = [...parentFilters];
  const related: RelatedCondition[] = [];
  for (const [key, raw] of Object.entries(query)) {
    if (reserved.has(key)) continue;
    const declared = resource.list.params.get(key);
    if (declared) {
      const value = declaredValue(declared, single(key, raw, 'invalid_filter') ?? '');
      // As the compared field stores it (its normalisers); a filter on the record's own field is normalised below.
      if (declared.related) related.push(declared.related(normalizeFilterValue(declared.compared, 'eq', value)));
      else filters.push({ field: declared.own ?? '', op: declared.op, value });
      continue;
    }
    const m = FILTER_KEY.exec(key);
    const name = engine(m?.[1] ?? '');
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
        `${wire(name)} cannot be filtered with "${op.slice(0, 16)}"; its operators: ${operators.join(', ')}.`,
      );
    }
    const text = single(key, raw, 'invalid_filter') ?? '';
    if (text === '' && PARTIAL_MATCH.has(op) && field.type !== 'array')
      throw new ApiError('invalid_filter', `${key} needs a value: an empty one would match every record.`);
    if (op === 'in') {
      const parts = text.split(',');
      if (parts.length > 100) throw new ApiError('invalid_filter', 'in takes at most 100 values.');
      filters.push({ field: name, op, value: parts.map((p) => typedValue(field, wire(name), p)) });
    } else if (field.type === 'array') {
      const items = field.spec.items;
      filters.push({
        field: name,
        op,
        value: items ? typedValue({ type: items.type, spec: items }, wire(name), text) : text,
      });
    } else {
      filters.push({ field: name, op, value: typedValue(field, wire(name), text) });
    }
  }
  // Values as the fields store them: `?email=A@B.COM` finds a@b.com when email declares `normalize: [lower]`.
  for (const [i, f] of filters.entries()) {
    const field = resource.fieldsByName.get(f.field);
    if (field) filters[i] = { ...f, value: normalizeFilterValue(field, f.op, f.value) };
  }
  const expand = parseExpand(resource, query, true);
  const countText = style === 'cursor' ? single('count', query.count, 'invalid_query') : undefined;
  if (countText !== undefined && countText !== 'true' && countText !== 'false')
    throw new ApiError('invalid_query', 'count must be true or false.');
  const sortKey = sort.map((s) => `${s.desc ? '-' : ''}${s.field}`).join(',');
  const cursorText = style === 'cursor' ? single('cursor', query.cursor, 'invalid_query') : undefined;
  const keysetLength = sort.at(-1)?.field === 'createdAt' ? sort.length : sort.length + 1;
  const after = cursorText !== undefined ? decodeCursor(cursorText, sortKey, keysetLength) : undefined;
  const start = paged.start;
  const offset =
    start.style === 'offset' ? start.offset : start.style === 'page' ? (start.page - 1) * pageSize : undefined;
  const total = resource.wire.list.total !== undefined;
  const count = style === 'cursor' ? countText === 'true' : style === 'page' || (style === 'offset' && total);
  // Built as before for cursor paging (one spread at most): the query object is on every list's hot path.
  const limit = pageSize + 1;
  return {
    query: withRelated(
      offset === undefined
        ? { filters, sort, ...(after ? { after } : {}), limit, count }
        : { filters, sort, limit, offset, count },
      related,
    ),
    pageSize,
    expand,
    sortKey,
    start,
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
