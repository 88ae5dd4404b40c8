import { type ASTNode, parse, serialize } from '@marcbachmann/cel-js';
import type { ResourcePlan } from '../../plan/types.ts';
import { CEL_COMPARE, MIRROR_COMPARE, mentions, SQL_COMPARABLE_TYPES } from '../../spec/cel-ast.ts';
import type { Condition } from '../../storage/index.ts';

/** Evaluates, per caller, to the condition rows must meet; undefined when the rule cannot run as SQL. */
export type ConditionFor = (vars: { principal: unknown }) => Condition;

type Part = (vars: { principal: unknown }) => Condition | unknown;
const isCondition = (v: unknown): v is { kind: string } =>
  typeof v === 'object' && v !== null && 'kind' in v && typeof (v as { kind: unknown }).kind === 'string';
const CONDITION = Symbol('condition');
type Compiled = { readonly [CONDITION]: true; readonly run: (vars: { principal: unknown }) => Condition };

const RECORD = new Set(['record']);
const mentionsRecord = (node: ASTNode): boolean => mentions(node, RECORD);
const COMPARE = CEL_COMPARE;
const MIRROR = MIRROR_COMPARE;
const SQL_TYPES = SQL_COMPARABLE_TYPES;

/**
 * Compiles a CEL rule to a function of the caller that yields a SQL-ready condition: the parts that do not
 * mention `record` are evaluated for the caller (they become true/false), and `record.<field>` compared with
 * such a value, or tested with `in [...]`, becomes a column condition. Anything else (functions over record
 * fields, arithmetic on columns, nested fields) is not compiled: undefined, and the caller filters in process.
 */
export const compileRuleCondition = (expression: string, resource: ResourcePlan): ConditionFor | undefined => {
  let root: ASTNode;
  try {
    root = parse(expression).ast;
  } catch {
    return undefined;
  }
  const column = (node: ASTNode): string | undefined => {
    if (node.op !== '.') return undefined;
    const [target, name] = node.args as [ASTNode, string];
    if (target.op !== 'id' || target.args !== 'record') return undefined;
    if (name === 'id' || name === 'createdAt' || name === 'updatedAt') return name;
    const field = resource.fieldsByName.get(name);
    return field && SQL_TYPES.has(field.type) ? name : undefined;
  };
  const value = (node: ASTNode): Part | undefined => {
    if (mentionsRecord(node)) return undefined;
    const evaluate = parse(serialize(node));
    return (vars) => evaluate(vars as Record<string, unknown>);
  };
  const build = (node: ASTNode): Compiled | undefined => {
    const wrap = (run: (vars: { principal: unknown }) => Condition): Compiled => ({ [CONDITION]: true, run });
    if (!mentionsRecord(node)) {
      const evaluate = parse(serialize(node));
      return wrap((vars) => {
        try {
          return { kind: 'const', value: evaluate(vars as Record<string, unknown>) === true };
        } catch {
          return { kind: 'const', value: false };
        }
      });
    }
    switch (node.op) {
      case '||':
      case '&&': {
        const [a, b] = (node.args as [ASTNode, ASTNode]).map(build);
        if (!a || !b) return undefined;
        const kind = node.op === '||' ? 'or' : 'and';
        return wrap((vars) => simplify({ kind, items: [a.run(vars), b.run(vars)] }));
      }
      case '!_': {
        const inner = build(node.args as ASTNode);
        return inner ? wrap((vars) => simplify({ kind: 'not', item: inner.run(vars) })) : undefined;
      }
      case '==':
      case '!=':
      case '<':
      case '<=':
      case '>':
      case '>=': {
        const [l, r] = node.args as [ASTNode, ASTNode];
        const op = COMPARE[node.op];
        const left = column(l);
        const right = column(r);
        const field = left ?? right;
        const other = value(left ? r : l);
        if (!field || !other || (left && right)) return undefined;
        const cmp = left ? op : MIRROR[op];
        return wrap((vars) => {
          try {
            const v = other(vars);
            if (isCondition(v) || (v !== null && typeof v === 'object')) return { kind: 'const', value: false };
            return { kind: 'compare', field, op: cmp, value: typeof v === 'bigint' ? Number(v) : v };
          } catch {
            return { kind: 'const', value: false };
          }
        });
      }
      case 'in': {
        const [l, r] = node.args as [ASTNode, ASTNode];
        const field = column(l);
        const list = value(r);
        if (!field || !list) return undefined;
        return wrap((vars) => {
          try {
            const v = list(vars);
            return Array.isArray(v)
              ? { kind: 'in', field, values: v.map((x) => (typeof x === 'bigint' ? Number(x) : x)) }
              : { kind: 'const', value: false };
          } catch {
            return { kind: 'const', value: false };
          }
        });
      }
      default:
        return undefined;
    }
  };
  const compiled = build(root);
  return compiled ? (vars) => compiled.run(vars) : undefined;
};

/** Folds constants: `true || x` is true, `false && x` is false, and so on. */
const simplify = (c: Condition): Condition => {
  if (c.kind === 'not') return c.item.kind === 'const' ? { kind: 'const', value: !c.item.value } : c;
  if (c.kind !== 'and' && c.kind !== 'or') return c;
  const absorbing = c.kind === 'or';
  const items: Condition[] = [];
  for (const item of c.items) {
    if (item.kind === 'const') {
      if (item.value === absorbing) return { kind: 'const', value: absorbing };
      continue;
    }
    items.push(item);
  }
  if (items.length === 0) return { kind: 'const', value: !absorbing };
  return items.length === 1 ? (items[0] as Condition) : { kind: c.kind, items };
};
