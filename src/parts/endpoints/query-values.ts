import type { ListParamPlan } from '../../plan/types.ts';
import type { ListQuery, RelatedCondition } from '../../storage/index.ts';
import { ApiError } from '../errors/api-error.ts';
import { isDateTime, isIsoDate } from '../resources/value-problem.ts';
import { isNumberText } from './coerce-query.ts';
import type { Filterable } from './filter-operators.ts';

/** A query-string value as the field's type, or 400 invalid_filter. */
export const typedValue = (field: Filterable, name: string, raw: string): unknown => {
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

/** A declared parameter's value as its field's type; an empty one would match nothing or everything: 400. */
export const declaredValue = (param: ListParamPlan, raw: string): unknown => {
  if (raw === '') throw new ApiError('invalid_filter', `${param.name} needs a value.`);
  return typedValue(param.compared, param.name, raw);
};

/** The query with these related conditions too (the query as it is without any). */
export const withRelated = (query: ListQuery, related: readonly RelatedCondition[]): ListQuery =>
  related.length ? { ...query, related: [...(query.related ?? []), ...related] } : query;
