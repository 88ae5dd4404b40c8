import type { ResourcePlan } from '../../plan/types.ts';
import type { OpenApiObject } from '../openapi-model.ts';
import { MAX_OFFSET } from './list-query.ts';

/** The query parameters of the resource's paging style. */
export const pagingParameters = (resource: ResourcePlan): OpenApiObject[] => {
  const { pageSize } = resource.list;
  const size = (name: string) => ({
    name,
    in: 'query',
    description: `Page size (at most ${pageSize.max}).`,
    schema: { type: 'integer', minimum: 1, maximum: pageSize.max, default: pageSize.default },
  });
  const id = (name: string, description: string) => ({
    name,
    in: 'query',
    description,
    schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,255}$' },
  });
  switch (resource.wire.paging) {
    case 'cursor':
      return [
        size('limit'),
        {
          name: 'cursor',
          in: 'query',
          description: `The \`${resource.wire.list.next ?? 'nextCursor'}\` of the previous page.`,
          schema: { type: 'string', maxLength: 2048 },
        },
      ];
    case 'offset':
      return [
        size('limit'),
        {
          name: 'offset',
          in: 'query',
          description: 'How many matching records to skip.',
          schema: { type: 'integer', minimum: 0, maximum: MAX_OFFSET, default: 0 },
        },
      ];
    case 'page':
      return [
        {
          name: 'page',
          in: 'query',
          description: 'The page number, from 1; the Link header names the first, previous, next and last pages.',
          schema: { type: 'integer', minimum: 1, default: 1 },
        },
        size('per_page'),
      ];
    case 'starting_after':
      return [
        size('limit'),
        id('starting_after', 'The id of a record of this list: the page starts after it.'),
        id('ending_before', 'The id of a record of this list: the page ends before it (not with starting_after).'),
      ];
  }
};

/** A list answer's example, with the members the wire gives it. */
export const pageExample = (resource: ResourcePlan, record: unknown): unknown => {
  const { list } = resource.wire;
  if (list.items === null) return [record];
  const out: Record<string, unknown> = {};
  for (const extra of list.extras) if (extra.name === 'object') out.object = extra.value;
  out[list.items] = [record];
  if (list.next !== undefined) out[list.next] = null;
  if (list.total !== undefined && resource.wire.paging !== 'cursor') out[list.total] = 1;
  if (list.hasMore !== undefined) out[list.hasMore] = false;
  for (const extra of list.extras)
    if (extra.name !== 'object')
      out[extra.name] = extra.templated
        ? String(extra.value).replaceAll('{path}', resource.collectionPath)
        : extra.value;
  return out;
};
