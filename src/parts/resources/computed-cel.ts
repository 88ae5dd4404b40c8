import type { ASTNode } from '@marcbachmann/cel-js';
import {
  CEL_COMPARE,
  type CompareOp,
  evaluatorOf,
  MIRROR_COMPARE,
  mentions,
  SQL_COMPARABLE_TYPES,
  selectedField,
} from '../../spec/cel-ast.ts';
import { parseCel } from '../../spec/cel-parse.ts';

/** The variables a computed field's value-side expressions read: the caller's subject and the principal. */
export interface ComputedVars {
  /** The principal's subject; null for an anonymous caller. */
  readonly caller: string | null;
  readonly principal: unknown;
}

/** One comparison of a computed field's condition: a field of the counted record against the record or a value. */
export type ComputedTermPlan =
  | { readonly field: string; readonly op: CompareOp; readonly record: string }
  | {
      readonly field: string;
      readonly op: CompareOp;
      readonly value: (vars: ComputedVars) => unknown;
      /** The value when it reads neither the caller nor the principal (a literal such as 'open' or true). */
      readonly constant?: string | number | boolean;
    };

/** What `exists(R, x, …)` or `count(R, x, …)` compiles to: every term must hold. */
export interface ComputedQueryPlan {
  readonly kind: 'exists' | 'count';
  readonly from: string;
  readonly terms: readonly ComputedTermPlan[];
}

/** Why an expression cannot be a computed field: an unknown name, or a shape that does not compile to SQL. */
export interface ComputedProblem {
  readonly kind: 'unknown-name' | 'not-sql';
  readonly reason: string;
  readonly offset?: number;
}

/** The type of a field of a resource (system fields included), or undefined when there is no such resource/field. */
export interface ComputedScope {
  readonly resources: readonly string[];
  fieldType(resource: string, field: string): string | undefined;
}

/** What a value may read that changes per request. */
const CALLER_NAMES: ReadonlySet<string> = new Set(['caller', 'principal']);

const SHAPE =
  'a computed field is exists(Resource, x, <condition>) or count(Resource, x, <condition>), where the condition ' +
  'is comparisons (==, !=, <, <=, >, >=) joined by &&, each between x.<field> and record.<field>, caller, or a ' +
  'constant';

const notSql = (reason: string, node?: ASTNode): ComputedProblem => ({
  kind: 'not-sql',
  reason: `${reason}: ${SHAPE}`,
  ...(node ? { offset: node.range.start } : {}),
});

/**
 * Compiles a computed field's CEL to the subquery it runs as, checked against the resources' fields. Only the
 * shapes a correlated SQL subquery can run are taken (see SHAPE); anything else is a problem, never a slow path.
 */
export const compileComputed = (
  expression: string,
  self: string,
  type: 'boolean' | 'integer',
  scope: ComputedScope,
): ComputedQueryPlan | ComputedProblem => {
  let root: ASTNode;
  try {
    root = parseCel(expression).ast;
  } catch (error) {
    return { kind: 'not-sql', reason: `does not parse: ${(error as Error).message.split('\n')[0]}` };
  }
  if (root.op !== 'call') return notSql('not a call of exists or count', root);
  const [fn, args] = root.args as [string, ASTNode[]];
  if (fn !== 'exists' && fn !== 'count') return notSql(`"${fn}" is neither exists nor count`, root);
  if (fn === 'exists' && type !== 'boolean') return notSql('exists(...) gives a boolean: type must be boolean', root);
  if (fn === 'count' && type !== 'integer') return notSql('count(...) gives an integer: type must be integer', root);
  const [target, bound, condition] = args;
  if (args.length !== 3 || !target || !bound || !condition) return notSql(`${fn} takes three arguments`, root);
  if (target.op !== 'id') return notSql('the first argument must name a resource', target);
  if (bound.op !== 'id') return notSql('the second argument must be a variable name', bound);
  const from = target.args as string;
  const variable = bound.args as string;
  if (!scope.resources.includes(from))
    return { kind: 'unknown-name', reason: `there is no resource "${from}"`, offset: target.range.start };
  if (variable === 'record' || variable === 'caller' || variable === 'principal')
    return notSql(`"${variable}" is taken: name the variable otherwise`, bound);
  const inner = new Set([variable, 'record']);
  const terms: ComputedTermPlan[] = [];
  const comparable = (resource: string, field: string, node: ASTNode): ComputedProblem | undefined => {
    const fieldType = scope.fieldType(resource, field);
    if (fieldType === undefined)
      return { kind: 'unknown-name', reason: `${resource} has no field "${field}"`, offset: node.range.start };
    return SQL_COMPARABLE_TYPES.has(fieldType)
      ? undefined
      : notSql(`${resource}.${field} is of type ${fieldType}`, node);
  };
  const walk = (node: ASTNode): ComputedProblem | undefined => {
    if (node.op === '&&') {
      const [a, b] = node.args as [ASTNode, ASTNode];
      return walk(a) ?? walk(b);
    }
    if (!(node.op in CEL_COMPARE)) return notSql(`"${node.op}" is not a comparison or &&`, node);
    const op = CEL_COMPARE[node.op as keyof typeof CEL_COMPARE];
    const [l, r] = node.args as [ASTNode, ASTNode];
    const leftField = selectedField(l, variable);
    const rightField = selectedField(r, variable);
    if ((leftField === undefined) === (rightField === undefined))
      return notSql(`each comparison needs ${variable}.<field> on exactly one side`, node);
    const field = (leftField ?? rightField) as string;
    const other = leftField !== undefined ? r : l;
    const cmp: CompareOp = leftField !== undefined ? op : MIRROR_COMPARE[op];
    const wrong = comparable(from, field, leftField !== undefined ? l : r);
    if (wrong) return wrong;
    const recordField = selectedField(other, 'record');
    if (recordField !== undefined) {
      const bad = comparable(self, recordField, other);
      if (bad) return bad;
      terms.push({ field, op: cmp, record: recordField });
      return undefined;
    }
    if (mentions(other, inner)) return notSql(`"${variable}" or record inside a computed value`, other);
    // The common case, read without evaluating CEL on every request.
    if (other.op === 'id' && other.args === 'caller') {
      terms.push({ field, op: cmp, value: (vars) => vars.caller });
      return undefined;
    }
    const evaluate = evaluatorOf(other);
    const value = (vars: ComputedVars) => {
      try {
        const v = evaluate(vars as unknown as Record<string, unknown>);
        return typeof v === 'bigint' ? Number(v) : v;
      } catch {
        return null;
      }
    };
    const constant = mentions(other, CALLER_NAMES) ? undefined : value({ caller: null, principal: null });
    terms.push({
      field,
      op: cmp,
      value,
      ...(typeof constant === 'string' || typeof constant === 'boolean' || Number.isFinite(constant)
        ? { constant: constant as string | number | boolean }
        : {}),
    });
    return undefined;
  };
  const problem = walk(condition);
  return problem ?? { kind: fn, from, terms };
};

export const isComputedProblem = (v: ComputedQueryPlan | ComputedProblem): v is ComputedProblem => 'reason' in v;
