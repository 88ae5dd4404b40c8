import type { ResourcePlan } from '../../plan/types.ts';
import type { FilterOp } from '../../storage/index.ts';
import type { OpenApiObject } from '../openapi-model.ts';
import { type Filterable, operatorsFor, SYSTEM_FILTERABLE } from './filter-operators.ts';

/** A filter value's schema: the field's type, without its write-time constraints. */
export const valueSchema = (field: Filterable): OpenApiObject => {
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

const FOLDS = 'ignoring the case of A–Z (other letters, é or İ say, compare exactly)';

const DESCRIBE: Record<FilterOp, string> = {
  eq: 'equals the value',
  ne: 'does not equal the value',
  gt: 'is greater than the value',
  gte: 'is at least the value',
  lt: 'is less than the value',
  lte: 'is at most the value',
  in: 'is one of the values (comma-separated, at most 100)',
  prefix: 'starts with the value (case counts)',
  contains: 'contains the value (case counts)',
  ieq: `equals the value, ${FOLDS}`,
  iprefix: `starts with the value, ${FOLDS}`,
  icontains: `contains the value, ${FOLDS}`,
};

const describe = (field: Filterable, op: FilterOp): string =>
  field.type === 'array' && op === 'contains' ? 'has the value as an item' : DESCRIBE[op];

/**
 * `field=value` and `field[op]=value` query parameters for every filterable field and every operator the runtime
 * accepts for its type (`field` and `field[eq]` are the same filter).
 */
export const filterParameters = (resource: ResourcePlan): OpenApiObject[] => {
  const names = ['id', ...resource.list.filter.filter((n) => n !== 'id')];
  return names.flatMap((name) => {
    const field = resource.fieldsByName.get(name) ?? SYSTEM_FILTERABLE[name];
    if (!field) return [];
    const wire = resource.wire.names.out.get(name)?.name ?? name;
    return operatorsFor(field).flatMap((op) => {
      const parameter = (key: string) => ({
        name: key,
        in: 'query',
        description: `Only records whose ${wire} ${describe(field, op)}.`,
        schema: op === 'in' ? { type: 'string' } : valueSchema(field),
      });
      return op === 'eq' ? [parameter(wire), parameter(`${wire}[eq]`)] : [parameter(`${wire}[${op}]`)];
    });
  });
};
