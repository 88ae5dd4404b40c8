import type { FieldPlan, ResourcePlan, SortKey } from '../../plan/types.ts';
import type { Filter, FilterOp, ListQuery } from '../../storage/index.ts';
import { ApiError } from '../errors/api-error.ts';
import { parseSortKeys } from './plan.ts';
import { LIST_OPERATORS } from './schema.ts';

export const RESERVED_QUERY = new Set(['limit', 'cursor', 'sort', 'expand', 'count']);
const MAX_CURSOR_CHARS = 2048;
const FILTER_KEY = /^([A-Za-z_][A-Za-z0-9_]*)(?:\[([a-z]+)\])?$/;

const SYSTEM: Record<string, Pick<FieldPlan, 'type'>> = {
  id: { type: 'string' },
  createdAt: { type: 'datetime' },
  updatedAt: { type: 'datetime' },
};

const single = (
  name: string,
  value: string | string[] | undefined,
  code: 'invalid_filter' | 'invalid_query',
): string => {
  if (Array.isArray(value)) throw new ApiError(code, `${name} is given more than once.`);
  return value ?? '';
};

/** A query-string value as the field's type, or 400 invalid_filter. */
const typedValue = (
  field: Pick<FieldPlan, 'type'> & { spec?: FieldPlan['spec'] },
  name: string,
  raw: string,
): unknown => {
  const bad = () => new ApiError('invalid_filter', `"${raw.slice(0, 64)}" is not a valid value for ${name}.`);
  switch (field.type) {
    case 'integer': {
      if (!/^-?\d{1,16}$/.test(raw) || !Number.isSafeInteger(Number(raw))) throw bad();
      return Number(raw);
    }
    case 'number': {
      const n = Number(raw);
      if (raw.trim() === '' || !Number.isFinite(n)) throw bad();
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
      if (!field.spec?.values?.includes(raw)) throw bad();
      return raw;
    case 'datetime':
      if (Number.isNaN(Date.parse(raw))) throw bad();
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
  const fieldOf = (name: string) => (hidden.has(name) ? undefined : (resource.fieldsByName.get(name) ?? SYSTEM[name]));
  const visible = (names: readonly string[]) => names.filter((n) => !hidden.has(n));
  const limitText = single('limit', query.limit, 'invalid_query');
  let pageSize = resource.list.pageSize.default;
  if (limitText) {
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
  const sort: SortKey[] = sortText ? parseSortKeys(sortText) : [...resource.list.defaultSort];
  for (const key of sort) {
    if (!resource.list.sort.includes(key.field) || !fieldOf(key.field)) {
      throw new ApiError(
        'invalid_sort',
        `Cannot sort on "${key.field.slice(0, 64)}"; sortable: ${visible(resource.list.sort).join(', ')}.`,
      );
    }
  }
  if (sort.length > 4) throw new ApiError('invalid_sort', 'Sort on at most four fields.');
  const filters: Filter[] = [...parentFilters];
  for (const [key, raw] of Object.entries(query)) {
    if (RESERVED_QUERY.has(key)) continue;
    const m = FILTER_KEY.exec(key);
    const name = m?.[1] ?? '';
    const op = (m?.[2] ?? 'eq') as FilterOp;
    const field = fieldOf(name);
    if (!m || !field || !(resource.list.filter.includes(name) || name === 'id')) {
      throw new ApiError(
        'invalid_filter',
        `Cannot filter on "${key.slice(0, 64)}"; filterable: ${visible(resource.list.filter).join(', ') || 'none'}.`,
      );
    }
    if (!(LIST_OPERATORS as readonly string[]).includes(op))
      throw new ApiError('invalid_filter', `Unknown operator "${op.slice(0, 16)}".`);
    const text = single(key, raw, 'invalid_filter');
    if (op === 'in') {
      const parts = text.split(',');
      if (parts.length > 100) throw new ApiError('invalid_filter', 'in takes at most 100 values.');
      filters.push({ field: name, op, value: parts.map((p) => typedValue(field, name, p)) });
    } else if (op === 'contains' && field.type === 'array') {
      const items = (field as FieldPlan).spec?.items;
      filters.push({
        field: name,
        op,
        value: items ? typedValue({ type: items.type, spec: items }, name, text) : text,
      });
    } else {
      filters.push({ field: name, op, value: typedValue(field, name, text) });
    }
  }
  const expandText = single('expand', query.expand, 'invalid_query');
  const expand = expandText ? expandText.split(',') : [];
  for (const e of expand) {
    if (!resource.list.expand.includes(e)) throw new ApiError('invalid_expand', `Cannot expand "${e.slice(0, 64)}".`);
  }
  const countText = single('count', query.count, 'invalid_query');
  if (countText && countText !== 'true' && countText !== 'false')
    throw new ApiError('invalid_query', 'count must be true or false.');
  const sortKey = sort.map((s) => `${s.desc ? '-' : ''}${s.field}`).join(',');
  const cursorText = single('cursor', query.cursor, 'invalid_query');
  const keysetLength = sort.at(-1)?.field === 'createdAt' ? sort.length : sort.length + 1;
  const after = cursorText ? decodeCursor(cursorText, sortKey, keysetLength) : undefined;
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
