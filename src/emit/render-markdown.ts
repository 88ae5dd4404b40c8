import { type DocBlock, type Inline, type Span, spansOf } from '../parts/docs-model.ts';
import type { DocDocument } from './document.ts';

const WORD = /[\p{L}\p{N}]/u;

/** Escapes the characters Markdown would read as syntax inside running text. */
const escapeText = (text: string): string =>
  text
    .replace(/[\\`*_[\]<|]/g, (c, i: number) =>
      // An underscore between two letters or digits is never emphasis (CommonMark 6.2): keep `not_found` readable.
      c === '_' && WORD.test(text[i - 1] ?? '') && WORD.test(text[i + 1] ?? '') ? c : `\\${c}`,
    )
    .replace(/^>/, '\\>');

/** A code span whose fence is longer than any backtick run inside it (CommonMark 6.1). */
const codeSpan = (text: string): string => {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  const pad = text.startsWith('`') || text.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${text}${pad}${fence}`;
};

const span = (s: Span): string => {
  if (typeof s === 'string') return escapeText(s);
  if ('code' in s) return codeSpan(s.code);
  return `**${escapeText(s.strong)}**`;
};

export const inlineMarkdown = (inline: Inline): string => spansOf(inline).map(span).join('');

/** A table cell is one line, and a pipe inside a code span still ends the cell unless escaped (GFM). */
const cell = (inline: Inline): string =>
  inlineMarkdown(inline)
    .replace(/\r?\n/g, ' ')
    .replace(/(?<!\\)\|/g, '\\|');

const fenced = (language: string, source: string): string => {
  const longest = Math.max(2, ...[...source.matchAll(/`{3,}/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}${language}\n${source}\n${fence}`;
};

const block = (b: DocBlock): string => {
  switch (b.kind) {
    case 'paragraph':
      return inlineMarkdown(b.text);
    case 'heading':
      return `${'#'.repeat(b.level)} ${inlineMarkdown(b.text)}`;
    case 'list':
      return b.items.map((item) => `- ${inlineMarkdown(item).replace(/\r?\n/g, ' ')}`).join('\n');
    case 'table':
      return [
        `| ${b.columns.map((c) => cell(c)).join(' | ')} |`,
        `| ${b.columns.map(() => '---').join(' | ')} |`,
        ...b.rows.map((row) => `| ${b.columns.map((_, i) => cell(row[i] ?? '')).join(' | ')} |`),
      ].join('\n');
    case 'mermaid':
      return fenced('mermaid', b.source);
    case 'code':
      return fenced(b.language, b.source);
  }
};

/** The document as CommonMark with GFM tables; Mermaid diagrams are ```mermaid blocks. */
export const renderMarkdown = (doc: DocDocument): string =>
  `${[
    `# ${escapeText(doc.title)}`,
    escapeText(doc.intro),
    ...doc.sections.flatMap((s) => [`## ${escapeText(s.heading)}`, ...s.blocks.map(block)]),
  ].join('\n\n')}\n`;
