import type { ResourcePlan } from '../../plan/types.ts';
import { code, type Span } from '../docs-model.ts';

export { isConventionalList } from './wire-plan.ts';

/** What the record's wire adds to "records are JSON objects of their fields": naming, object member, envelope. */
export const recordWireSpans = (resource: ResourcePlan): Span[] => {
  const { wire, object } = resource;
  const spans: Span[] = [];
  if (wire.naming === 'snake_case')
    spans.push(' Field names are snake_case on the wire, in bodies, queries and errors.');
  if (object) spans.push(' Every answer has ', code(`"object": "${object}"`), '.');
  if (wire.envelope)
    spans.push(' Requests and answers of one record travel in an envelope: ', code(`{"${wire.envelope}": {…}}`), '.');
  return spans;
};

/** How a list pages, for a style other than cursor. */
export const pagingSpans = (resource: ResourcePlan): Span[] => {
  switch (resource.wire.paging) {
    case 'offset':
      return ['pages by ', code('limit'), ' and ', code('offset'), '.'];
    case 'page':
      return [
        'pages by ',
        code('page'),
        ' (from 1) and ',
        code('per_page'),
        '; the ',
        code('Link'),
        ' header (RFC 8288) names the first, prev, next and last pages.',
      ];
    default:
      return [
        'pages by ',
        code('limit'),
        ' and ',
        code('starting_after'),
        ' or ',
        code('ending_before'),
        ' (the id of a record of the list).',
      ];
  }
};

/** The members of a list answer as one line of JSON: `{"articles": […], "articlesCount": n}`. */
export const listAnswerShape = (resource: ResourcePlan): string => {
  const { list } = resource.wire;
  if (list.items === null) return '[ … ]';
  const members: string[] = [];
  for (const extra of list.extras)
    if (extra.name === 'object') members.push(`"object": ${JSON.stringify(extra.value)}`);
  members.push(`"${list.items}": [ … ]`);
  if (list.next) members.push(`"${list.next}": "…" | null`);
  if (list.total) members.push(`"${list.total}": n${resource.wire.paging === 'cursor' ? ' (with count=true)' : ''}`);
  if (list.hasMore) members.push(`"${list.hasMore}": true | false`);
  for (const extra of list.extras)
    if (extra.name !== 'object') members.push(`"${extra.name}": ${JSON.stringify(extra.value)}`);
  return `{${members.join(', ')}}`;
};
