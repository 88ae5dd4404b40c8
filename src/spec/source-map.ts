import { createRequire } from 'node:module';
import type { LineCounter, Node, Pair, Scalar } from 'yaml';

/**
 * The `yaml` package, loaded when a position is first asked for: a well-formed spec is read by js-yaml
 * (fast-yaml.ts) and most starts never need it.
 */
export const yamlPackage = (): typeof import('yaml') => createRequire(import.meta.url)('yaml') as typeof import('yaml');

export type PathSegment = string | number;
export interface Position {
  readonly line: number;
  readonly col: number;
}

/** Where a diagnostic points: a key, its value, or the `offset`-th character of a string value (an expression). */
export type Anchor = 'key' | 'value' | { readonly offset: number };

interface StringValue {
  readonly value: string;
  readonly type: Scalar['type'];
  readonly start: number;
  readonly end: number;
}

export const toPointer = (path: readonly PathSegment[]): string =>
  path.map((s) => `/${String(s).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');

/** Where each node of a spec sits in its file, by JSON Pointer. Specs without positions answer undefined. */
export class SourceMap {
  readonly #keys = new Map<string, number>();
  readonly #values = new Map<string, number>();
  readonly #strings = new Map<string, StringValue>();
  /** A TypeScript or JavaScript spec: no syntax tree here, so keys are found by searching the text (see locate). */
  #moduleText = false;
  #lines: LineCounter | undefined;
  /** A YAML text whose positions are read only when first asked for (fromYamlText). */
  #pendingYaml: string | undefined;
  constructor(
    readonly file: string,
    lines?: LineCounter,
    private readonly text?: string,
  ) {
    this.#lines = lines;
  }

  /** The map of a YAML text, parsed with `yaml` only when a position is first asked for. */
  static fromYamlText(file: string, text: string): SourceMap {
    const map = new SourceMap(file, undefined, text);
    map.#pendingYaml = text;
    return map;
  }

  /** Parses a pending YAML text (fromYamlText) for its positions. */
  #ready(): void {
    const text = this.#pendingYaml;
    if (text === undefined) return;
    this.#pendingYaml = undefined;
    const { LineCounter, parseDocument } = yamlPackage();
    const lines = new LineCounter();
    const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false });
    this.#lines = lines;
    this.#fill(doc.contents);
  }

  static fromYaml(file: string, root: Node | null, lines: LineCounter, text?: string): SourceMap {
    const map = new SourceMap(file, lines, text);
    map.#fill(root);
    return map;
  }

  /** Records where each node of a `yaml` syntax tree sits, by JSON Pointer. */
  #fill(root: Node | null): void {
    const { isMap, isPair, isScalar, isSeq } = yamlPackage();
    const walk = (node: unknown, pointer: string) => {
      if (!node || typeof node !== 'object') return;
      const range = (node as Node).range;
      if (range) this.#values.set(pointer, range[0]);
      if (isScalar(node) && typeof node.value === 'string' && range)
        this.#strings.set(pointer, { value: node.value, type: node.type, start: range[0], end: range[1] });
      if (isMap(node)) {
        for (const item of node.items as Pair[]) {
          if (!isPair(item)) continue;
          const key = isScalar(item.key) ? String(item.key.value) : String(item.key);
          const child = `${pointer}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
          const keyRange = (item.key as Node | null)?.range;
          if (keyRange) this.#keys.set(child, keyRange[0]);
          walk(item.value, child);
        }
      } else if (isSeq(node)) {
        for (const [i, item] of node.items.entries()) walk(item, `${pointer}/${i}`);
      }
    };
    walk(root, '');
  }

  /**
   * The map of a spec written as a module (`defineService({...})`). Without parsing TypeScript, each key of a
   * pointer is searched in the text as `key:` (bare or quoted) after the key before it: right for the object
   * literals specs are written as, and an ancestor's position when a key is computed or spread in.
   */
  static fromModuleText(file: string, text: string): SourceMap {
    const lines = new (yamlPackage().LineCounter)();
    lines.addNewLine(0);
    for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lines.addNewLine(i + 1);
    const map = new SourceMap(file, lines, text);
    map.#moduleText = true;
    return map;
  }

  /** The offset of the deepest key of `pointer` found in a module's text, after `defineService(` when it is there. */
  #searchKeys(pointer: string): number | undefined {
    const text = this.text ?? '';
    let from = Math.max(0, text.indexOf('defineService('));
    let found: number | undefined;
    for (const raw of pointer.split('/').slice(1)) {
      const key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
      if (/^\d+$/.test(key)) continue; // an array index: the item is not named in the text
      const escaped = key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      const match = new RegExp(`(?<![\\w$])(['"\`]?)${escaped}\\1\\s*:`, 'g');
      match.lastIndex = from;
      const hit = match.exec(text);
      if (!hit) break;
      found = hit.index;
      from = hit.index + hit[0].length;
    }
    return found;
  }

  positionOfOffset(offset: number): Position | undefined {
    this.#ready();
    if (!this.#lines) return undefined;
    const { line, col } = this.#lines.linePos(offset);
    return { line, col };
  }

  /** The position of a key, its value, or a character inside a string value; falls back to the nearest ancestor. */
  locate(pointer: string, at: Anchor = 'value'): Position | undefined {
    this.#ready();
    if (!this.#lines) return undefined;
    if (typeof at === 'object') {
      const inside = this.#offsetInside(pointer, at.offset);
      return inside === undefined ? this.locate(pointer, 'value') : this.positionOfOffset(inside);
    }
    if (this.#moduleText) {
      const offset = this.#searchKeys(pointer);
      return offset === undefined ? { line: 1, col: 1 } : this.positionOfOffset(offset);
    }
    let p = pointer;
    for (;;) {
      const offset = (at === 'key' ? this.#keys.get(p) : undefined) ?? this.#values.get(p) ?? this.#keys.get(p);
      if (offset !== undefined) return this.positionOfOffset(offset);
      if (p === '') return { line: 1, col: 1 };
      p = p.slice(0, p.lastIndexOf('/'));
    }
  }

  /**
   * The file offset of a string value's `index`-th character. The value's characters appear in the source in
   * order, with quotes, escapes, line folds and indentation between them, so a forward match finds each one.
   */
  #offsetInside(pointer: string, index: number): number | undefined {
    const found = this.#strings.get(pointer);
    if (!found || this.text === undefined || index < 0 || index >= found.value.length) return undefined;
    const { value, type, start, end } = found;
    const block = type === 'BLOCK_LITERAL' || type === 'BLOCK_FOLDED';
    const quoted = type === 'QUOTE_DOUBLE' || type === 'QUOTE_SINGLE';
    const from = block ? this.text.indexOf('\n', start) + 1 : quoted ? start + 1 : start;
    if (from === 0 && block) return undefined;
    for (let i = 0, j = from; j < end; j++) {
      if (this.text[j] !== value[i]) continue;
      if (i === index) return j;
      i++;
    }
    return undefined;
  }
}
