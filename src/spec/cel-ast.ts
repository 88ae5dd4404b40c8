import { type ASTNode, parse, serialize } from '@marcbachmann/cel-js';

/** CEL's comparison operators as the storage conditions name them. */
export const CEL_COMPARE = { '==': 'eq', '!=': 'ne', '<': 'lt', '<=': 'lte', '>': 'gt', '>=': 'gte' } as const;
export type CompareOp = (typeof CEL_COMPARE)[keyof typeof CEL_COMPARE];
/** The same comparison with its sides swapped: `5 < x` is `x > 5`. */
export const MIRROR_COMPARE = { eq: 'eq', ne: 'ne', lt: 'gt', lte: 'gte', gt: 'lt', gte: 'lte' } as const;
/** Field types a SQL condition can compare as stored. */
export const SQL_COMPARABLE_TYPES: ReadonlySet<string> = new Set([
  'string',
  'integer',
  'number',
  'boolean',
  'enum',
  'ref',
  'date',
  'datetime',
]);

/** Whether `node` reads any of the variables `names` (a bound iteration variable, `record`). */
export const mentions = (node: ASTNode, names: ReadonlySet<string>): boolean => {
  if (node.op === 'id') return names.has(node.args);
  const walk = (v: unknown): boolean =>
    Array.isArray(v) ? v.some(walk) : typeof v === 'object' && v !== null && 'op' in v && mentions(v as ASTNode, names);
  return walk(node.args as unknown);
};

/** A sub-expression as a function of the variables it reads (it is parsed again on its own, once). */
export const evaluatorOf = (node: ASTNode): ((vars: Record<string, unknown>) => unknown) => {
  const evaluate = parse(serialize(node));
  return (vars) => evaluate(vars);
};

/** `<variable>.<name>`: the name, when `node` selects a field of that variable. */
export const selectedField = (node: ASTNode, variable: string): string | undefined => {
  if (node.op !== '.') return undefined;
  const [target, name] = node.args as [ASTNode, string];
  return target.op === 'id' && target.args === variable ? name : undefined;
};
