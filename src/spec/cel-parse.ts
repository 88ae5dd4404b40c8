import { parse } from '@marcbachmann/cel-js';

const parsed = new Map<string, ReturnType<typeof parse>>();

/**
 * cel-js's parse, once per expression text: the checker and the server parse the same rules and guards (at
 * start-up, where a parse of cold code costs about a millisecond). What it answers is only ever read. An expression
 * that does not parse throws each time.
 */
export const parseCel = (expression: string): ReturnType<typeof parse> => {
  let found = parsed.get(expression);
  if (!found) {
    found = parse(expression);
    parsed.set(expression, found);
  }
  return found;
};
