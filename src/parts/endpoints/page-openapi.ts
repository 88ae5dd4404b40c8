import type { ResourcePlan } from '../../plan/types.ts';
import type { OpenApiObject } from '../openapi-model.ts';
import { pageExample } from './paging-openapi.ts';

/** The `<Resource>Page` schema: a list answer exactly as the resource's wire gives it. */
export const pageSchema = (resource: ResourcePlan, item: OpenApiObject, example: unknown): OpenApiObject => {
  const { list, paging } = resource.wire;
  const items = { type: 'array', items: item };
  if (list.items === null)
    return { ...items, description: `One page of ${resource.name} records, as a bare array.`, examples: [[example]] };
  const properties: Record<string, OpenApiObject> = {};
  const required: string[] = [];
  for (const extra of list.extras) {
    if (extra.name !== 'object') continue;
    properties.object = { type: typeof extra.value, const: extra.value, enum: [extra.value] };
    required.push('object');
  }
  properties[list.items] = items;
  required.push(list.items);
  if (list.next !== undefined) {
    properties[list.next] = {
      type: ['string', 'null'],
      description: 'Pass as `cursor` for the next page; null on the last page.',
    };
    required.push(list.next);
  }
  if (list.total !== undefined) {
    const always = paging !== 'cursor';
    properties[list.total] = {
      type: 'integer',
      minimum: 0,
      description: always ? 'Every matching record.' : 'Every matching record; only with count=true.',
    };
    if (always) required.push(list.total);
  }
  if (list.hasMore !== undefined) {
    properties[list.hasMore] = { type: 'boolean', description: 'Whether more records follow this page.' };
    required.push(list.hasMore);
  }
  for (const extra of list.extras) {
    if (extra.name === 'object') continue;
    properties[extra.name] = extra.templated
      ? { type: 'string', description: `${String(extra.value)}, where {path} is the request path without its query.` }
      : { type: typeof extra.value, const: extra.value, enum: [extra.value] };
    required.push(extra.name);
  }
  return {
    type: 'object',
    description: `One page of ${resource.name} records.`,
    properties,
    required,
    additionalProperties: false,
    examples: [pageExample(resource, example)],
  };
};
