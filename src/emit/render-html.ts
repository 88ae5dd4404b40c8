import { type DocBlock, type DocSection, type Inline, type Span, spansOf } from '../parts/docs-model.ts';
import type { DocDocument } from './document.ts';
import { HTML_STYLE } from './html-style.ts';
import { mermaidScript } from './mermaid-script.ts';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);

const span = (s: Span): string => {
  if (typeof s === 'string') return escapeHtml(s);
  if ('code' in s) return `<code>${escapeHtml(s.code)}</code>`;
  return `<strong>${escapeHtml(s.strong)}</strong>`;
};

const inline = (value: Inline): string => spansOf(value).map(span).join('');

const block = (b: DocBlock): string => {
  switch (b.kind) {
    case 'paragraph':
      return `<p>${inline(b.text)}</p>`;
    case 'heading':
      return `<h${b.level}>${inline(b.text)}</h${b.level}>`;
    case 'list':
      return `<ul>${b.items.map((item) => `<li>${inline(item)}</li>`).join('')}</ul>`;
    case 'table': {
      const head = `<thead><tr>${b.columns.map((c) => `<th>${escapeHtml(c)}</th>`).join('')}</tr></thead>`;
      const rows = b.rows.map((r) => `<tr>${b.columns.map((_, i) => `<td>${inline(r[i] ?? '')}</td>`).join('')}</tr>`);
      return `<div class="table-wrap"><table>${head}<tbody>${rows.join('\n')}</tbody></table></div>`;
    }
    case 'mermaid':
      // Mermaid reads the element's text and replaces it with an <svg>; without script the source stays readable.
      return `<pre class="mermaid">${escapeHtml(b.source)}</pre>`;
    case 'code':
      return `<pre><code class="language-${escapeHtml(b.language)}">${escapeHtml(b.source)}</code></pre>`;
  }
};

const sectionHtml = (s: DocSection): string =>
  `<section id="${s.part}"${s.shown ? '' : ' class="open"'}>\n<h2>${escapeHtml(s.heading)}</h2>\n${s.blocks.map(block).join('\n')}\n</section>`;

const toc = (doc: DocDocument): string =>
  `<nav aria-label="Contents"><h2>Contents</h2><ol>${doc.sections
    .map((s) => `<li${s.shown ? '' : ' class="open"'}><a href="#${s.part}">${escapeHtml(s.heading)}</a></li>`)
    .join('')}</ol></nav>`;

/** The document as one self-contained HTML page: embedded CSS, a table of contents, Mermaid inlined. */
export const renderHtml = (doc: DocDocument): string => {
  const hasDiagram = doc.sections.some((s) => s.blocks.some((b) => b.kind === 'mermaid'));
  const scripts = hasDiagram
    ? `<script>${mermaidScript()}</script>\n<script>mermaid.initialize({ startOnLoad: true, securityLevel: 'strict' });</script>\n`
    : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(doc.title)}</title>
<style>${HTML_STYLE}</style>
</head>
<body>
<div class="page">
${toc(doc)}
<main>
<h1>${escapeHtml(doc.title)}</h1>
<p>${escapeHtml(doc.intro)}</p>
${doc.sections.map(sectionHtml).join('\n')}
</main>
</div>
${scripts}</body>
</html>
`;
};
