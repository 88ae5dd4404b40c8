import { parseCel } from '../../spec/cel-parse.ts';

export type Guard = (vars: { record: unknown; input: unknown; principal: unknown }) => boolean;

/**
 * Compiles a CEL guard once. A guard that errors while evaluating (a missing key, a type clash) counts as
 * false: a transition only goes ahead when its guard positively holds.
 */
export const compileGuard = (expression: string): Guard => {
  const evaluate = parseCel(expression);
  return (vars) => {
    try {
      return evaluate(vars as Record<string, unknown>) === true;
    } catch {
      return false;
    }
  };
};
