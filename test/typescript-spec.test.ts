import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { checkFile } from '../src/spec/check.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const typoSpec = fileURLToPath(new URL('fixtures/ts-typo/service.ts', import.meta.url));
const exampleSpec = fileURLToPath(new URL('../examples/orders-ts/service.ts', import.meta.url));

/** Type-checks one file with the project's compiler options; returns the diagnostics in that file only. */
const typeCheck = (file: string): ts.Diagnostic[] => {
  const config = ts.getParsedCommandLineOfConfigFile(
    `${root}tsconfig.json`,
    { noEmit: true, rootDir: root },
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  );
  if (!config) throw new Error('tsconfig.json could not be read');
  const program = ts.createProgram([file], config.options);
  const source = program.getSourceFile(file);
  return ts.getPreEmitDiagnostics(program, source).filter((d) => d.file?.fileName === source?.fileName);
};

const lineOf = (d: ts.Diagnostic): number =>
  d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : 0;

describe('specs written in TypeScript', () => {
  it('a misspelt field type fails to type-check, pointing at its line', () => {
    const typoLine =
      readFileSync(typoSpec, 'utf8')
        .split('\n')
        .findIndex((line) => line.includes("'strnig'")) + 1;
    const diagnostics = typeCheck(typoSpec);
    expect(diagnostics.length).toBeGreaterThan(0);
    expect(diagnostics.map(lineOf)).toContain(typoLine);
    expect(diagnostics.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')).join('\n')).toContain('strnig');
  });

  it('the TypeScript example type-checks', () => {
    expect(typeCheck(exampleSpec).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))).toEqual([]);
  });

  it('the TypeScript example loads through the real loader with no errors', async () => {
    const { spec, diagnostics } = await checkFile(exampleSpec);
    expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(spec?.service?.name).toBe('orders-ts');
    expect(Object.keys(spec?.resources ?? {})).toEqual(['Product', 'Order']);
  });
});
