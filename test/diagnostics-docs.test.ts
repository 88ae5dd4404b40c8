import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DIAGNOSTIC_CODES, type DiagnosticCode } from '../src/spec/diagnostic-codes.ts';

interface DocEntry {
  readonly part: string;
  readonly severity: string | undefined;
}

/** `## part` sections holding `### \`code\`` entries, each with a `Severity: …` line. */
const readDoc = (): Map<string, DocEntry> => {
  const entries = new Map<string, DocEntry>();
  let part = '';
  let code: string | undefined;
  for (const line of readFileSync('docs/diagnostics.md', 'utf8').split('\n')) {
    const section = /^## (.+)$/.exec(line);
    if (section) part = section[1]?.trim() ?? '';
    const heading = /^### `([^`]+)`/.exec(line);
    if (heading?.[1]) {
      code = heading[1];
      entries.set(code, { part, severity: undefined });
    }
    const severity = /^Severity: (\w+)/.exec(line);
    if (severity && code) entries.set(code, { part, severity: severity[1] });
  }
  return entries;
};

describe('docs/diagnostics.md', () => {
  const doc = readDoc();
  const codes = Object.keys(DIAGNOSTIC_CODES) as DiagnosticCode[];

  it('documents every diagnostic code', () => {
    expect(codes.filter((c) => !doc.has(c))).toEqual([]);
  });

  it('documents no code that does not exist', () => {
    expect([...doc.keys()].filter((c) => !(c in DIAGNOSTIC_CODES))).toEqual([]);
  });

  it('gives each code its severity, under its part', () => {
    const drift = codes
      .filter((c) => doc.has(c))
      .filter((c) => {
        const entry = doc.get(c);
        return entry?.severity !== DIAGNOSTIC_CODES[c].severity || entry.part !== DIAGNOSTIC_CODES[c].part;
      });
    expect(drift).toEqual([]);
  });
});
