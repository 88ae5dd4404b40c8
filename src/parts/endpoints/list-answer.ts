import type { ResourcePlan } from '../../plan/types.ts';
import type { HandlerInput } from '../../runtime/context.ts';
import { JsonAnswer } from '../../runtime/json-answer.ts';

/** What a page knows about itself, for the members and headers its paging style answers with. */
export interface PageFacts {
  readonly data: readonly unknown[];
  readonly nextCursor: string | null;
  readonly total?: number;
  readonly hasMore: boolean;
  /** Page paging: the page number and size the request asked for. */
  readonly page?: { readonly number: number; readonly size: number };
}

const JSON_TYPE = 'application/json; charset=utf-8';

/** The request path without its query: the collection path with the request's parameters, under the base path. */
export const createPathOf = (basePath: string, resource: ResourcePlan, served = resource.collectionPath) => {
  const parts = served.split(/\{(\w+)\}/);
  return (input: HandlerInput): string =>
    basePath + parts.map((part, i) => (i % 2 === 1 ? encodeURIComponent(input.params[part] ?? '') : part)).join('');
};

/** RFC 8288 links of a numbered page: first, prev, next and last (last when the total is known). */
const pageLinks = (path: string, input: HandlerInput, facts: PageFacts): string | undefined => {
  const page = facts.page;
  if (!page) return undefined;
  const kept = Object.entries(input.query).filter(
    (e): e is [string, string] => e[0] !== 'page' && e[0] !== 'per_page' && typeof e[1] === 'string',
  );
  const link = (n: number, rel: string) => {
    const query = new URLSearchParams([...kept, ['page', String(n)], ['per_page', String(page.size)]]);
    return `<${path}?${query}>; rel="${rel}"`;
  };
  const last = facts.total === undefined ? undefined : Math.max(1, Math.ceil(facts.total / page.size));
  const links = [
    link(1, 'first'),
    ...(page.number > 1 ? [link(page.number - 1, 'prev')] : []),
    ...(facts.hasMore ? [link(page.number + 1, 'next')] : []),
    ...(last !== undefined ? [link(last, 'last')] : []),
  ];
  return links.join(', ');
};

/**
 * Compiles the answer of a list page as the resource's wire says: its members (items, next cursor, total,
 * has-more, extras in that order) or the bare array, and a Link header for numbered pages.
 */
export const compileListAnswer = (basePath: string, resource: ResourcePlan, served = resource.collectionPath) => {
  const { list, paging } = resource.wire;
  const pathOf = createPathOf(basePath, resource, served);
  const needsPath = paging === 'page' || list.extras.some((e) => e.templated);
  return (input: HandlerInput, facts: PageFacts) => {
    const path = needsPath ? pathOf(input) : '';
    let body: string;
    if (list.items === null) body = JSON.stringify(facts.data);
    else {
      const members: Record<string, unknown> = {};
      for (const extra of list.extras) if (extra.name === 'object') members[extra.name] = extra.value;
      members[list.items] = facts.data;
      if (list.next !== undefined) members[list.next] = facts.nextCursor;
      if (list.total !== undefined && facts.total !== undefined) members[list.total] = facts.total;
      if (list.hasMore !== undefined) members[list.hasMore] = facts.hasMore;
      for (const extra of list.extras) {
        if (extra.name === 'object') continue;
        members[extra.name] = extra.templated ? String(extra.value).replaceAll('{path}', path) : extra.value;
      }
      body = JSON.stringify(members);
    }
    const links = paging === 'page' ? pageLinks(path, input, facts) : undefined;
    return links ? new JsonAnswer(200, body, { 'content-type': JSON_TYPE, link: links }) : new JsonAnswer(200, body);
  };
};
