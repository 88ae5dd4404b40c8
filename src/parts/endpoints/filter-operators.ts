import type { FieldPlan } from '../../plan/types.ts';
import type { FilterOp } from '../../storage/index.ts';

/** What a filter needs to know of a field: its type, and for enums and arrays its spec. */
export type Filterable = Pick<FieldPlan, 'type' | 'spec'>;

/** The system fields every record has; `id` is always filterable. */
export const SYSTEM_FILTERABLE: Readonly<Record<string, Filterable>> = {
  id: { type: 'string', spec: { type: 'string' } },
  createdAt: { type: 'datetime', spec: { type: 'datetime' } },
  updatedAt: { type: 'datetime', spec: { type: 'datetime' } },
};

const ORDERED: readonly FilterOp[] = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in'];
const TEXT: readonly FilterOp[] = ['eq', 'ne', 'in', 'prefix', 'contains', 'ieq', 'iprefix', 'icontains'];

/** The operators that make sense for a field's type: the runtime accepts these and only these, and documents them. */
export const operatorsFor = (field: Filterable): readonly FilterOp[] => {
  switch (field.type) {
    case 'integer':
    case 'number':
    case 'decimal':
    case 'date':
    case 'datetime':
      return ORDERED;
    case 'boolean':
      return ['eq', 'ne'];
    case 'enum':
    case 'ref':
      return ['eq', 'ne', 'in'];
    case 'string':
      return TEXT;
    case 'array':
      return ['contains'];
    default:
      return ['eq', 'ne'];
  }
};

/** Operators that match part of a string: an empty value would match every record, so it is refused. */
export const PARTIAL_MATCH: ReadonlySet<FilterOp> = new Set(['prefix', 'contains', 'iprefix', 'icontains']);
