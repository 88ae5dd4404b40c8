import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DIFF_RULES } from '../src/parts/versioning/diff/diff-specs.ts';
import { BREAKING, COVERED, type DiffCase, SAFE } from './versioning-diff-cases.ts';

const ROOT = resolve(import.meta.dirname, '..');
const BASE = 'test/fixtures/diff/base.yaml';
const baseText = readFileSync(join(ROOT, BASE), 'utf8');
const dir = mkdtempSync(join(tmpdir(), 'nf-diff-'));

/** Runs the real `ninefold diff` (dist built by the global set-up). */
const diff = (args: string[]) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
    execFile(
      process.execPath,
      [join(ROOT, 'bin/ninefold.js'), 'diff', ...args],
      { cwd: ROOT },
      (error, stdout, stderr) => done({ code: error ? Number(error.code) : 0, stdout, stderr }),
    );
  });

interface Located {
  rule: string;
  breaking: boolean;
  file: string;
  line: number;
  col: number;
  message: string;
  coveredBy?: string;
}

/** The line and column of `col` on the first line that holds `line`. */
const locate = (text: string, line: string, col: string) => {
  const lines = text.split('\n');
  const index = lines.findIndex((l) => l.includes(line));
  expect(index, `no line holds ${line}`).toBeGreaterThanOrEqual(0);
  const column = (lines[index] as string).indexOf(col);
  expect(column, `${col} is not on the line of ${line}`).toBeGreaterThanOrEqual(0);
  return { line: index + 1, col: column + 1 };
};

const run = async (c: DiffCase) => {
  let text = baseText;
  for (const [from, to] of c.edits) {
    expect(text.includes(from), `${c.name}: the base has no ${JSON.stringify(from)}`).toBe(true);
    text = text.replace(from, to);
  }
  const file = join(dir, `${c.name.replaceAll(' ', '-')}.yaml`);
  writeFileSync(file, text);
  const result = await diff([BASE, file, '--format', 'json']);
  expect(result.stderr, c.name).toBe('');
  const report = JSON.parse(result.stdout) as { changes: Located[]; breaking: number; uncovered: number };
  const where = locate(c.side === 'old' ? baseText : text, c.line, c.col);
  const found = report.changes.find((x) => x.rule === c.rule && x.line === where.line && x.col === where.col);
  expect(found, `${c.name}: ${JSON.stringify(report.changes, null, 1)}`).toBeDefined();
  expect(found?.breaking).toBe(c.breaking);
  expect(found?.file).toBe(c.side === 'old' ? BASE : file);
  return { ...result, report, found };
};

describe('ninefold diff: planted edits of one base spec', () => {
  it('finds no change between a spec and itself (exit 0)', async () => {
    const result = await diff([BASE, BASE]);
    expect(result).toMatchObject({ code: 0, stdout: 'no changes\n' });
  });

  it.each(BREAKING.map((c) => [c.name, c] as const))('breaking, not covered: %s → exit 1', async (_, c) => {
    const { code, found } = await run(c);
    expect(found?.coveredBy).toBeUndefined();
    expect(code).toBe(1);
  });

  it.each(SAFE.map((c) => [c.name, c] as const))('safe: %s → exit 0, nothing breaking', async (_, c) => {
    const { code, report } = await run(c);
    expect(report.changes.filter((x) => x.breaking)).toEqual([]);
    expect(code).toBe(0);
  });

  it.each(COVERED.map((c) => [c.name, c] as const))('covered by a new version: %s → exit 0', async (_, c) => {
    const { code, found, report } = await run(c);
    expect(found?.coveredBy).toBe(c.coveredBy);
    expect(report.uncovered).toBe(0);
    expect(code).toBe(0);
  });

  it('plants at least 20 breaking edits and 10 safe ones', () => {
    expect(BREAKING.length).toBeGreaterThanOrEqual(20);
    expect(SAFE.length).toBeGreaterThanOrEqual(10);
  });
});

describe('ninefold diff: the command line', () => {
  it('writes one line per change with file:line:col, and a summary', async () => {
    const file = join(dir, 'text.yaml');
    writeFileSync(file, baseText.replace('maxLength: 40 }', 'maxLength: 20 }').replace('100/min', '200/min'));
    const { code, stdout } = await diff([BASE, file]);
    const at = locate(readFileSync(file, 'utf8'), 'nickname:', 'maxLength');
    expect(stdout).toContain(
      `${file}:${at.line}:${at.col}  breaking  constraint-tightened  Customer.nickname: maxLength 40 → 20 — not covered by a new version\n`,
    );
    expect(stdout).toMatch(/safe {6}limit-raised {2}limit rate default: 100\/min → 200\/min\n/);
    expect(stdout.trim().split('\n').at(-1)).toBe('2 change(s): 1 breaking (1 not covered by a new version), 1 safe');
    expect(code).toBe(1);
  });

  it('answers 2 for a wrong command line or a spec with errors, and compares nothing', async () => {
    expect((await diff([BASE])).code).toBe(2);
    expect((await diff([BASE, BASE, '--format', 'xml'])).code).toBe(2);
    const broken = join(dir, 'broken.yaml');
    writeFileSync(broken, baseText.replace('type: integer', 'type: integr'));
    const result = await diff([BASE, broken]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('has errors; nothing compared');
  });

  it('docs/versioning.md lists every rule with its class, and no other', () => {
    const docs = readFileSync(join(ROOT, 'docs/versioning.md'), 'utf8');
    const listed = [...docs.matchAll(/^\| `([a-z-]+)` \| (breaking|safe) \|/gm)].map((m) => [m[1], m[2]]);
    const rules = Object.entries(DIFF_RULES).map(([rule, r]) => [rule, r.breaking ? 'breaking' : 'safe']);
    expect(listed.sort()).toEqual(rules.sort());
  });
});
