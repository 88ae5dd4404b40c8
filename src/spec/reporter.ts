import { DIAGNOSTIC_CODES, type Diagnostic, type DiagnosticCode } from './diagnostic-codes.ts';
import { type Anchor, type PathSegment, type SourceMap, toPointer } from './source-map.ts';

/** Collects diagnostics with their positions; checks report, never throw. */
export class Reporter {
  readonly diagnostics: Diagnostic[] = [];
  constructor(readonly source: SourceMap) {}

  report(code: DiagnosticCode, path: readonly PathSegment[] | string, message: string, at: Anchor = 'value') {
    const pointer = typeof path === 'string' ? path : toPointer(path);
    const pos = this.source.locate(pointer, at);
    this.diagnostics.push({
      code,
      severity: DIAGNOSTIC_CODES[code].severity,
      message,
      file: this.source.file,
      pointer,
      ...(pos ? { line: pos.line, col: pos.col } : {}),
    });
  }

  get hasErrors(): boolean {
    return this.diagnostics.some((d) => d.severity === 'error');
  }
}

/** Orders diagnostics by position so a reader walks the file top to bottom. */
export const sortDiagnostics = (list: readonly Diagnostic[]): Diagnostic[] =>
  [...list].sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.col ?? 0) - (b.col ?? 0));

export const formatDiagnostic = (d: Diagnostic): string => {
  const where = d.line === undefined ? d.file : `${d.file}:${d.line}:${d.col}`;
  const pointer = d.line === undefined && d.pointer ? ` (at ${d.pointer})` : '';
  return `${where}  ${d.severity}  ${d.code}  ${d.message}${pointer}`;
};
