import type { Plan } from '../plan/types.ts';
import { buildDocument } from './document.ts';
import { renderHtml } from './render-html.ts';
import { renderMarkdown } from './render-markdown.ts';

export type { DocDocument } from './document.ts';
export { buildDocument } from './document.ts';

export const DOC_FORMATS = ['md', 'html'] as const;
export type DocFormat = (typeof DOC_FORMATS)[number];

/** The nine-part document of a plan, as Markdown or as a self-contained HTML page. */
export const renderDocs = (plan: Plan, format: DocFormat = 'md'): string => {
  const doc = buildDocument(plan);
  return format === 'html' ? renderHtml(doc) : renderMarkdown(doc);
};
