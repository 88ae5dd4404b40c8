import type { FieldPlan, ResourcePlan } from '../../plan/types.ts';
import type { FilterOp } from '../../storage/index.ts';
import type { OpenApiObject } from '../openapi-model.ts';

type Filterable = Pick<FieldPlan, 'type' | 'spec'>;

const SYSTEM: Record<string, Filterable> = {
  id: { type: 'string', spec: { type: 'string' } },
  createdAt: { type: 'datetime', spec: { type: 'datetime' } },
  updatedAt: { type: 'datetime', spec: { type: 'datetime' } },
};

const ORDERED: readonly FilterOp[] = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in'];

/** The operators that make sense for a field's type (the runtime parses every one of them). */
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
      return ['eq', 'ne', 'in', 'prefix'];
    case 'array':
      return ['contains'];
    default:
      return ['eq', 'ne'];
  }
};

/** A filter value's schema: the field's type, without its write-time constraints. */
const valueSchema = (field: Filterable): OpenApiObject => {
  switch (field.type) {
    case 'integer':
    case 'number':
    case 'boolean':
      return { type: field.type };
    case 'enum':
      return { type: 'string', enum: [...(field.spec.values ?? [])] };
    case 'datetime':
      return { type: 'string', format: 'date-time' };
    case 'date':
      return { type: 'string', format: 'date' };
    case 'array':
      return field.spec.items
        ? valueSchema({ type: field.spec.items.type, spec: field.spec.items })
        : { type: 'string' };
    default:
      return { type: 'string' };
  }
};

const DESCRIBE: Record<FilterOp, string> = {
  eq: 'equals the value',
  ne: 'does not equal the value',
  gt: 'is greater than the value',
  gte: 'is at least the value',
  lt: 'is less than the value',
  lte: 'is at most the value',
  in: 'is one of the values (comma-separated, at most 100)',
  prefix: 'starts with the value',
  contains: 'contains the value as an item',
};

/** `field=value` and `field[op]=value` query parameters for every filterable field and its operators. */
export const filterParameters = (resource: ResourcePlan): OpenApiObject[] => {
  const names = ['id', ...resource.list.filter.filter((n) => n !== 'id')];
  return names.flatMap((name) => {
    const field = resource.fieldsByName.get(name) ?? SYSTEM[name];
    if (!field) return [];
    return operatorsFor(field).map((op) => ({
      name: op === 'eq' && field.type !== 'array' ? name : `${name}[${op}]`,
      in: 'query',
      description: `Only records whose ${name} ${DESCRIBE[op]}.`,
      schema: op === 'in' ? { type: 'string' } : valueSchema(field),
    }));
  });
};
