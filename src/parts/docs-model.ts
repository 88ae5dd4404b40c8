/**
 * The shape of one section of the nine-part document. Each part's `docs.ts` returns a `DocSection`;
 * the emitters in `src/emit/` render it to Markdown or HTML. Text here is plain: renderers escape it.
 */

/** A run of text: plain, `code`, or strong. */
export type Span = string | { readonly code: string } | { readonly strong: string };
/** Inline content: one span or a sequence of spans. */
export type Inline = Span | readonly Span[];

export type DocBlock =
  | { readonly kind: 'paragraph'; readonly text: Inline }
  | { readonly kind: 'heading'; readonly level: 3 | 4; readonly text: Inline }
  | { readonly kind: 'table'; readonly columns: readonly string[]; readonly rows: readonly (readonly Inline[])[] }
  | { readonly kind: 'list'; readonly items: readonly Inline[] }
  | { readonly kind: 'mermaid'; readonly source: string }
  | { readonly kind: 'code'; readonly language: string; readonly source: string };

export type PartId =
  | 'purpose'
  | 'resources'
  | 'states'
  | 'endpoints'
  | 'auth'
  | 'events'
  | 'errors'
  | 'limits'
  | 'versioning';

export interface DocSection {
  readonly part: PartId;
  readonly heading: string;
  /** False when the spec leaves the part open and the section only says "not shown". */
  readonly shown: boolean;
  readonly blocks: readonly DocBlock[];
}

export const code = (text: string): Span => ({ code: text });
export const strong = (text: string): Span => ({ strong: text });
export const paragraph = (...text: Span[]): DocBlock => ({ kind: 'paragraph', text });
export const heading = (level: 3 | 4, ...text: Span[]): DocBlock => ({ kind: 'heading', level, text });
export const list = (items: readonly Inline[]): DocBlock => ({ kind: 'list', items });
export const table = (columns: readonly string[], rows: readonly (readonly Inline[])[]): DocBlock => ({
  kind: 'table',
  columns,
  rows,
});

/** The section of a part the spec leaves open, worded as in the seed document. */
export const notShownSection = (part: PartId, heading: string, line: string): DocSection => ({
  part,
  heading,
  shown: false,
  blocks: [paragraph(line)],
});

/** Joins inline pieces with a separator: [`a`, `b`] → `a`, `b`. */
export const joinSpans = (items: readonly Span[], separator = ', '): Span[] =>
  items.flatMap((item, i) => (i === 0 ? [item] : [separator, item]));

export const codes = (items: readonly string[], separator = ', '): Span[] => joinSpans(items.map(code), separator);

/** The spans of an inline, whether it is one span or several. */
export const spansOf = (inline: Inline): readonly Span[] =>
  Array.isArray(inline) ? (inline as readonly Span[]) : [inline as Span];
