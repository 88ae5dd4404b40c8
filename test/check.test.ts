import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { checkSource } from '../src/spec/check.ts';
import { DIAGNOSTIC_CODES, type Diagnostic } from '../src/spec/diagnostic-codes.ts';
import { parseSpecText } from '../src/spec/load.ts';
import { CHECK_CASES } from './check-cases.ts';

const check = (text: string, file = 'spec.yaml'): Diagnostic[] =>
  checkSource({ ...parseSpecText(text, file), dir: '.' }).diagnostics;
const where = (d: Diagnostic) => `${d.code}@${d.line}:${d.col}`;
const semantic = (list: Diagnostic[]) => list.filter((d) => DIAGNOSTIC_CODES[d.code].part !== 'shape').map(where);

const TEN_MISTAKES = [
  'format-type-mismatch@8:29',
  'invalid-default@9:57',
  'unknown-resource@12:34',
  'unreachable-state@16:30',
  'invalid-guard@18:48',
  'unknown-state@19:35',
  'unknown-filter-field@22:22',
  'duplicate-route@24:46',
  'unknown-scheme@28:13',
  'error-status-out-of-range@31:29',
  'invalid-rate@33:20',
  'sunset-before-deprecation@39:56',
];

describe('semantic checks', () => {
  it.each(CHECK_CASES)('$rule', ({ spec, expected }) => {
    expect(semantic(check(spec))).toEqual(expected);
  });

  it('reports a missing initial state once, as the shape error', () => {
    const spec = `ninefold: 1
service: { name: s }
resources:
  A:
    fields: { a: { type: string } }
    states:
      transitions:
        finish: { from: draft, to: done }
`;
    expect(check(spec).map(where)).toEqual(['missing-property@6:5']);
  });

  it('gives the parser reason for a bad guard, without a stack', () => {
    const [guard] = check(CHECK_CASES.find((c) => c.rule === 'states-misc')?.spec ?? '').filter(
      (d) => d.code === 'invalid-guard',
    );
    expect(guard?.message).toBe('the guard is not valid CEL: Unexpected token: EOF');
  });

  it('finds nothing wrong in a spec that uses every part', () => {
    expect(check(readFileSync('test/fixtures/clean.yaml', 'utf8')).map(where)).toEqual([]);
  });

  it('reports all ten planted mistakes, each at its line and column', () => {
    const text = readFileSync('test/fixtures/ten-mistakes.yaml', 'utf8');
    const found = check(text).map(where);
    expect(found).toEqual(TEN_MISTAKES);
    expect(new Set(found.map((f) => f.split('@')[0])).size).toBeGreaterThanOrEqual(10);
  });

  it('never throws, whatever a node of the spec is replaced with', () => {
    const clean = parse(readFileSync('test/fixtures/clean.yaml', 'utf8')) as unknown;
    const paths: Array<Array<string | number>> = [];
    const walk = (node: unknown, path: Array<string | number>) => {
      paths.push(path);
      if (Array.isArray(node)) for (const [i, item] of node.entries()) walk(item, [...path, i]);
      else if (node && typeof node === 'object') for (const [k, v] of Object.entries(node)) walk(v, [...path, k]);
    };
    walk(clean, []);
    const replacements: unknown[] = [null, 7, 'x', [], {}, [null], { x: null }, true];
    for (const path of paths.slice(1)) {
      for (const replacement of replacements) {
        const raw = structuredClone(clean) as Record<string, unknown>;
        let parent: Record<string | number, unknown> = raw;
        for (const segment of path.slice(0, -1)) parent = parent[segment] as Record<string | number, unknown>;
        parent[path.at(-1) as string | number] = replacement;
        const { source } = parseSpecText('ninefold: 1\n', 'spec.yaml');
        expect(() => checkSource({ raw, source, diagnostics: [], dir: '.' })).not.toThrow();
      }
    }
  });
});

describe('ninefold check (the real CLI)', () => {
  const cli = (...args: string[]) => {
    const r = spawnSync(process.execPath, ['bin/ninefold.js', 'check', ...args], { encoding: 'utf8' });
    return { code: r.status, out: r.stdout, err: r.stderr, lines: r.stdout.trim().split('\n') };
  };
  const noStack = (text: string) => expect(text).not.toMatch(/^ {4}at /m);
  // Written at run time: no formatter can keep a malformed file malformed in the repository.
  const dir = mkdtempSync(join(tmpdir(), 'ninefold-check-'));
  const write = (name: string, text: string) => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };
  const level = (n: number) => `a${n}: &a${n} [${Array.from({ length: 9 }, () => `*a${n - 1}`).join(', ')}]`;
  const bomb = ['a0: &a0 [x, x, x, x, x, x, x, x, x]', ...Array.from({ length: 9 }, (_, i) => level(i + 1))].join('\n');
  const malformed = write('malformed.yaml', 'ninefold: 1\nservice: {name: [\n');
  const aliasBomb = write('alias-bomb.yaml', `${bomb}\n`);

  it('prints every planted mistake as file:line:col and exits 1', () => {
    const file = 'test/fixtures/ten-mistakes.yaml';
    const { code, lines, err } = cli(file);
    expect(code).toBe(1);
    expect(lines.slice(0, -1).map((l) => l.replace(/^(\S+:\d+:\d+) {2}error {2}(\S+) .*$/, '$2@$1'))).toEqual(
      TEN_MISTAKES.map((m) => {
        const [c, pos] = m.split('@');
        return `${c}@${file}:${pos}`;
      }),
    );
    expect(lines.at(-1)).toBe(`${TEN_MISTAKES.length} error(s), 0 warning(s)`);
    noStack(err);
  });

  it.each([
    ['malformed YAML', malformed, 'yaml-syntax'],
    ['a missing file', 'test/fixtures/no-such-spec.yaml', 'file-not-found'],
    ['an alias bomb', aliasBomb, 'yaml-alias-bomb'],
  ])('reports %s as one diagnostic and exits 1', (_what, file, code) => {
    const result = cli(file);
    expect(result.code).toBe(1);
    expect(result.lines).toHaveLength(2);
    expect(result.lines[0]).toContain(`  error  ${code}  `);
    expect(result.lines[0]?.startsWith(file)).toBe(true);
    expect(result.lines[1]).toBe('1 error(s), 0 warning(s)');
    noStack(result.out + result.err);
  });

  it('prints JSON with --format json', () => {
    const { code, out } = cli('test/fixtures/ten-mistakes.yaml', '--format', 'json');
    expect(code).toBe(1);
    const report = JSON.parse(out) as { errors: number; warnings: number; diagnostics: Diagnostic[] };
    expect(report.errors).toBe(TEN_MISTAKES.length);
    expect(report.warnings).toBe(0);
    expect(report.diagnostics.map(where)).toEqual(TEN_MISTAKES);
    expect(report.diagnostics[0]?.pointer).toBe('/resources/Customer/fields/age/format');
  });

  it('exits 0 on the empty example', () => {
    const { code, lines } = cli('examples/empty/service.yaml');
    expect(code).toBe(0);
    expect(lines).toEqual(['examples/empty/service.yaml: no problems found']);
  });
});
