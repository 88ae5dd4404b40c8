import { isMap, isPair, isScalar, isSeq, type LineCounter, type Node, type Pair } from 'yaml';

export type PathSegment = string | number;
export interface Position {
  readonly line: number;
  readonly col: number;
}

export const toPointer = (path: readonly PathSegment[]): string =>
  path.map((s) => `/${String(s).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');

/** Where each node of a spec sits in its file, by JSON Pointer. Specs without positions answer undefined. */
export class SourceMap {
  readonly #keys = new Map<string, number>();
  readonly #values = new Map<string, number>();
  constructor(
    readonly file: string,
    private readonly lines?: LineCounter,
  ) {}

  static fromYaml(file: string, root: Node | null, lines: LineCounter): SourceMap {
    const map = new SourceMap(file, lines);
    const walk = (node: unknown, pointer: string) => {
      if (!node || typeof node !== 'object') return;
      const range = (node as Node).range;
      if (range) map.#values.set(pointer, range[0]);
      if (isMap(node)) {
        for (const item of node.items as Pair[]) {
          if (!isPair(item)) continue;
          const key = isScalar(item.key) ? String(item.key.value) : String(item.key);
          const child = `${pointer}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
          const keyRange = (item.key as Node | null)?.range;
          if (keyRange) map.#keys.set(child, keyRange[0]);
          walk(item.value, child);
        }
      } else if (isSeq(node)) {
        for (const [i, item] of node.items.entries()) walk(item, `${pointer}/${i}`);
      }
    };
    walk(root, '');
    return map;
  }

  positionOfOffset(offset: number): Position | undefined {
    if (!this.lines) return undefined;
    const { line, col } = this.lines.linePos(offset);
    return { line, col };
  }

  /** The position of a key (`at: 'key'`) or its value; falls back to the nearest ancestor that has one. */
  locate(pointer: string, at: 'key' | 'value' = 'value'): Position | undefined {
    if (!this.lines) return undefined;
    let p = pointer;
    for (;;) {
      const offset = (at === 'key' ? this.#keys.get(p) : undefined) ?? this.#values.get(p) ?? this.#keys.get(p);
      if (offset !== undefined) return this.positionOfOffset(offset);
      if (p === '') return { line: 1, col: 1 };
      p = p.slice(0, p.lastIndexOf('/'));
    }
  }
}
