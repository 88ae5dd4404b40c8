import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

  it('its check diagnostics point at the line and column of the key', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ninefold-ts-spec-'));
    try {
      writeFileSync(join(dir, 'package.json'), '{ "type": "module" }');
      const lines = [
        '// A spec with two mistakes the type checker cannot see.',
        'export default {',
        '  ninefold: 1,',
        "  service: { name: 'notes' },",
        '  resources: {',
        '    Note: {',
        '      fields: {',
        "        title: { type: 'string' },",
        "        'owner': { type: 'ref', to: 'Usr' },",
        '      },',
        '    },',
        '  },',
        "  endpoints: { Note: { operations: ['list', 'gett'] } },",
        '};',
      ];
      writeFileSync(join(dir, 'service.ts'), lines.join('\n'));
      const { diagnostics } = await checkFile(join(dir, 'service.ts'));
      const at = (code: string) => diagnostics.find((d) => d.code === code);
      expect(at('unknown-resource')).toMatchObject({ line: 9, col: (lines[8] ?? '').indexOf('to:') + 1 });
      expect(at('invalid-value')).toMatchObject({ line: 13, col: (lines[12] ?? '').indexOf('operations') + 1 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
