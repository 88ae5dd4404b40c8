import { type ASTNode, Environment } from '@marcbachmann/cel-js';
import { parseCel } from './cel-parse.ts';
import { suggestion } from './validate-shape.ts';

/** What a name in a CEL expression holds, as far as the checker knows. */
export type CelShape =
  /** A map with known keys: any other key is a mistake. */
  | { readonly kind: 'object'; readonly label: string; readonly fields: ReadonlyMap<string, CelShape> }
  | { readonly kind: 'list'; readonly label: string; readonly item: CelShape }
  /** A scalar (string, integer, ref…): it has no fields. */
  | { readonly kind: 'value'; readonly label: string; readonly type: string }
  /** Free-form (json, JWT claims): any key may be there. */
  | { readonly kind: 'any' };

export const ANY_SHAPE: CelShape = { kind: 'any' };

export interface CelNameProblem {
  /** Where the wrong name starts in the expression. */
  readonly offset: number;
  /** The part of the expression that names it: `record.titel`, `input.lines[0].qty`. */
  readonly text: string;
  /** Why it is wrong: `Order has no field "titel"; did you mean "title"?`. */
  readonly reason: string;
}

/** Macros whose first argument names each item of the list they are called on. */
const COMPREHENSIONS = new Set(['all', 'exists', 'exists_one', 'map', 'filter']);
/** Names every expression can use: type names (`int`, `string`), the `cel` namespace. */
const GLOBALS = new Environment();

const isNode = (value: unknown): value is ASTNode =>
  typeof value === 'object' && value !== null && 'op' in value && 'range' in value;

/**
 * Every name in `expression` that its variables do not have: `record.titel`, `principal.rolez`, `recrod`.
 * The library's type checker stops at the first problem and does not look inside `has()`, so the parsed tree
 * is walked instead. An expression that does not parse answers nothing: that is reported on its own.
 */
export const celNameProblems = (expression: string, roots: ReadonlyMap<string, CelShape>): CelNameProblem[] => {
  let root: ASTNode;
  try {
    root = parseCel(expression).ast;
  } catch {
    return [];
  }
  const problems: CelNameProblem[] = [];
  const textOf = (node: ASTNode) => expression.slice(node.range.start, node.range.end);

  const select = (node: ASTNode, target: CelShape, name: string, offset: number): CelShape => {
    const wrong = (reason: string) => {
      problems.push({ offset, text: textOf(node), reason });
      return ANY_SHAPE;
    };
    switch (target.kind) {
      case 'object':
        return (
          target.fields.get(name) ??
          wrong(`${target.label} has no field "${name}"${suggestion(name, [...target.fields.keys()])}`)
        );
      case 'list':
        return wrong(`${target.label} is a list: it has no field "${name}"`);
      case 'value':
        return wrong(`${target.label} is a ${target.type}: it has no field "${name}"`);
      case 'any':
        return ANY_SHAPE;
    }
  };

  const walk = (node: ASTNode, scope: ReadonlyMap<string, CelShape>): CelShape => {
    switch (node.op) {
      case 'id': {
        const bound = scope.get(node.args);
        if (bound) return bound;
        if (!GLOBALS.hasVariable(node.args)) {
          const known = [...scope.keys()];
          problems.push({
            offset: node.range.start,
            text: node.args,
            reason: `there is no such variable (only ${known.join(', ')})${suggestion(node.args, known)}`,
          });
        }
        return ANY_SHAPE;
      }
      case '.':
      case '.?': {
        const [target, name] = node.args;
        return select(node, walk(target, scope), name, node.range.end - name.length);
      }
      case '[]':
      case '[?]': {
        const [target, index] = node.args;
        const shape = walk(target, scope);
        walk(index, scope);
        if (shape.kind === 'list') return shape.item;
        if (index.op === 'value' && typeof index.args === 'string')
          return select(node, shape, index.args, index.range.start + 1);
        return ANY_SHAPE;
      }
      case 'rcall': {
        const [name, receiver, args] = node.args;
        const target = walk(receiver, scope);
        const [first, ...rest] = args;
        const binds = name === 'bind' ? receiver.op === 'id' && receiver.args === 'cel' : COMPREHENSIONS.has(name);
        if (!binds || first?.op !== 'id' || rest.length === 0) {
          for (const arg of args) walk(arg, scope);
          return ANY_SHAPE;
        }
        // cel.bind(x, value, body) names `value`; list.all(x, p) names each item of the list.
        const [value, ...body] = name === 'bind' ? rest : [undefined, ...rest];
        const item = value ? walk(value, scope) : target.kind === 'list' ? target.item : ANY_SHAPE;
        const inner = new Map(scope).set(first.args, item);
        for (const arg of body) if (arg) walk(arg, inner);
        return ANY_SHAPE;
      }
      case 'call':
        for (const arg of node.args[1]) walk(arg, scope);
        return ANY_SHAPE;
      case 'map':
        for (const [key, value] of node.args) {
          walk(key, scope);
          walk(value, scope);
        }
        return ANY_SHAPE;
      case 'value':
        return ANY_SHAPE;
      default: {
        const args: unknown = node.args;
        for (const arg of Array.isArray(args) ? args : [args]) if (isNode(arg)) walk(arg, scope);
        return ANY_SHAPE;
      }
    }
  };
  walk(root, roots);
  return problems;
};
