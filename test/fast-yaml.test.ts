import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { checkSource } from '../src/spec/check.ts';
import { fastParseYaml } from '../src/spec/fast-yaml.ts';
import { parseSpecText } from '../src/spec/load.ts';

// The quick path (js-yaml) must give exactly what the `yaml` package gives, or stand aside.
const slow = (text: string): unknown => parseDocument(text, { uniqueKeys: true }).toJS();

const ROOT = join(import.meta.dirname, '..');
const specFiles = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === 'node_modules' || name.startsWith('.')) return [];
    if (statSync(path).isDirectory()) return specFiles(path);
    return /\.(ya?ml|json)$/.test(name) && !name.startsWith('package') && !name.startsWith('tsconfig') ? [path] : [];
  });

describe('the quick YAML path reads specs as the yaml package does', () => {
  const files = [
    ...specFiles(join(ROOT, 'examples')),
    ...specFiles(join(ROOT, 'test')),
    ...specFiles(join(ROOT, 'bench')),
  ];

  it('finds the example and fixture specs', () => {
    expect(files.length).toBeGreaterThan(20);
  });

  it.each(files.map((f) => [relative(ROOT, f)]))('%s', (file) => {
    const text = readFileSync(join(ROOT, file), 'utf8');
    const quick = fastParseYaml(text);
    if (quick !== undefined) expect(quick).toStrictEqual(slow(text));
  });

  it('takes the quick path for the order desk', () => {
    expect(fastParseYaml(readFileSync(join(ROOT, 'examples/orders/service.yaml'), 'utf8'))).toBeDefined();
  });
});

describe('scalars follow YAML 1.2 core, as the yaml package reads them', () => {
  const scalars = [
    '~',
    'null',
    'Null',
    'NULL',
    'nULL',
    '',
    'true',
    'True',
    'TRUE',
    'tRUE',
    'yes',
    'no',
    'on',
    'off',
    'y',
    '0',
    '12',
    '+12',
    '-12',
    '007',
    '0o17',
    '-0o17',
    '0x1F',
    '-0x1F',
    '0X1F',
    '0b101',
    '1_000',
    '99999999999999999999',
    '1.5',
    '1.',
    '.5',
    '-.5',
    '+.5',
    '1e3',
    '1E-3',
    '.5e2',
    '1e999',
    '-1e999',
    '.inf',
    '-.inf',
    '+.Inf',
    '.INF',
    '.nan',
    '.NaN',
    '.NAN',
    '-.nan',
    '1.50',
    '1:30',
    '2026-01-15',
    '12:00:00',
    '0.1.2',
    '1e',
    'e1',
    '+',
    '"12"',
    "'true'",
    '"~"',
    '1 2',
    'a b',
    '"\\u00e9"',
    "'it''s'",
    '"tab\\there"',
  ];
  it.each(scalars.map((s) => [s]))('value %j', (scalar) => {
    const text = `ninefold: 1\nvalue: ${scalar}\nlist: [${scalar || '""'}, x]\n`;
    const quick = fastParseYaml(text);
    expect(quick).toBeDefined();
    expect(quick).toStrictEqual(slow(text));
  });

  it.each(['12', '1.5', 'true', '.inf', '0x1F', 'yes', '"quoted key"'].map((k) => [k]))('key %j', (key) => {
    const text = `${key}: 1\nnested:\n  ${key}: { ${key}: 2 }\n`;
    expect(fastParseYaml(text)).toStrictEqual(slow(text));
  });

  it('block and flow styles', () => {
    const text = [
      'folded: >-',
      '  one',
      '  two',
      '',
      '  three',
      'literal: |',
      '  line one',
      '    indented',
      'keep: |+',
      '  kept',
      '',
      'flow: { a: [1, 2, { b: c }], "d e": f }',
      'seq:',
      '  - - nested',
      '    - 2',
      '  - key: value',
      '    other: 3',
      'multi line plain: this is',
      '  continued here',
      'empty:',
      'quoted: "a\\nb"',
      '# a comment',
      'after: x # trailing',
    ].join('\n');
    const quick = fastParseYaml(text);
    expect(quick).toBeDefined();
    expect(quick).toStrictEqual(slow(text));
  });
});

describe('what the quick path leaves to the yaml package', () => {
  it.each([
    ['an anchor and alias', 'a: &x { b: 1 }\nc: *x\n'],
    ['a tag', 'a: !!str 12\n'],
    ['a custom tag', 'a: !thing 12\n'],
    ['a directive', '%YAML 1.2\n---\na: 1\n'],
    ['a duplicate key', 'a: 1\na: 2\n'],
    ['two documents', 'a: 1\n---\nb: 2\n'],
    ['a syntax error', 'a: [1, 2\n'],
    ['a null key', 'null: 1\n'],
    ['a tilde key', '~: 1\n'],
    ['an empty text', ''],
    ['a tab in indentation', 'a:\n\tb: 1\n'],
  ])('%s', (_name, text) => {
    expect(fastParseYaml(text)).toBeUndefined();
  });

  it('a spec read on the quick path still gets line and column in its diagnostics', () => {
    const text = 'ninefold: 1\nservice:\n  name: demo\n  title: Demo\n  purpos: typo here\n';
    const parsed = parseSpecText(text, 'demo.yaml');
    expect(parsed.diagnostics).toEqual([]);
    const { diagnostics } = checkSource({ ...parsed, dir: ROOT });
    const typo = diagnostics.find((d) => d.pointer === '/service/purpos');
    expect(typo).toMatchObject({ code: 'unknown-property', line: 5, col: 3 });
  });

  it('a syntax error keeps its position and message', () => {
    const { diagnostics, raw } = parseSpecText('ninefold: 1\nservice: [1, 2\n', 'bad.yaml');
    expect(raw).toBeUndefined();
    expect(diagnostics[0]).toMatchObject({ code: 'yaml-syntax', line: expect.any(Number) });
  });
});
