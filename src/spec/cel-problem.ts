import { parseCel } from './cel-parse.ts';

/** Why `expression` is not valid CEL (the parser's first line, no stack), or undefined when it parses. */
export const celProblem = (expression: string): string | undefined => {
  try {
    parseCel(expression);
    return undefined;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return message.split('\n')[0]?.trim() || 'does not parse';
  }
};
