import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkSource } from '../src/spec/check.ts';
import type { Diagnostic } from '../src/spec/diagnostic-codes.ts';
import { parseSpecText } from '../src/spec/load.ts';

const check = (text: string): Diagnostic[] =>
  checkSource({ ...parseSpecText(text, 'spec.yaml'), dir: '.' }).diagnostics;
const where = (d: Diagnostic) => `${d.code}@${d.line}:${d.col}`;
const names = (text: string) => check(text).filter((d) => d.code === 'unknown-cel-name');

/** A resource with every kind of field a guard or rule can reach into. The guard is on line 21. */
const spec = (guard: string, rules = '') => `ninefold: 1
service: { name: s }
resources:
  Post:
    fields:
      title: { type: string }
      author: { type: string }
      address: { type: object, fields: { city: { type: string } } }
      lines: { type: array, items: { type: object, fields: { qty: { type: integer } } } }
      tags: { type: array, items: { type: string } }
      meta: { type: json }
      total: { type: decimal, readOnly: true }
    states:
      initial: draft
      final: [done]
      transitions:
        publish:
          from: draft
          to: done
          input: { reason: { type: string } }
          when: ${guard}
auth:
  roles: { admin: All. }
  rules:
    Post: ${rules || '{}'}
`;

describe('CEL guards name real fields', () => {
  it('reports a misspelt record field at its column, with the name it meant', () => {
    const found = names(spec('"size(record.titel) > 3"'));
    expect(found.map(where)).toEqual(['unknown-cel-name@21:30']);
    expect(found[0]?.message).toBe(
      'the guard names record.titel, but Post has no field "titel"; did you mean "title"?',
    );
    expect(found[0]?.pointer).toBe('/resources/Post/states/transitions/publish/when');
  });

  it('accepts declared, state and system fields, nested fields, list items, macros and free-form values', () => {
    const guard = [
      'record.title != "" && record.status == "draft" && record.id != "" && record.revision > 0',
      'record.createdAt != record.updatedAt && record.address.city != "" && record.lines[0].qty > 0',
      'record.lines.all(l, l.qty > 0) && record.tags.exists(t, t == "x") && record.meta.anything.at.all == 1',
      'has(record.address.city) && input.reason != "" && principal.claims.org == "x" && "admin" in principal.roles',
      'principal.subject == record.author && principal.scheme != "" && type(record.total) == string',
      'cel.bind(a, record.address, a.city == "x") && record.total != ""',
    ].join(' && ');
    expect(check(spec(JSON.stringify(guard))).map(where)).toEqual([]);
  });

  it('reports every wrong name in one guard: nested, list item, input, principal, has(), a scalar, a variable', () => {
    const guard = [
      'record.address.cty == ""',
      'record.lines.all(l, l.qtty > 0)',
      'record.lines[0].qtty > 0',
      'input.reasn != ""',
      'principal.role == "admin"',
      'has(record.titel)',
      'record.title.size > 1',
      'recrod.title == ""',
      'record["autor"] == ""',
    ].join(' && ');
    const found = names(spec(JSON.stringify(guard)));
    expect(found.map((d) => d.message)).toEqual([
      'the guard names record.address.cty, but Post.address has no field "cty"; did you mean "city"?',
      'the guard names l.qtty, but Post.lines[] has no field "qtty"; did you mean "qty"?',
      'the guard names record.lines[0].qtty, but Post.lines[] has no field "qtty"; did you mean "qty"?',
      'the guard names input.reasn, but the input of publish has no field "reasn"; did you mean "reason"?',
      'the guard names principal.role, but principal has no field "role"; did you mean "roles"?',
      'the guard names record.titel, but Post has no field "titel"; did you mean "title"?',
      'the guard names record.title.size, but Post.title is a string: it has no field "size"',
      'the guard names recrod, but there is no such variable (only record, input, principal); did you mean "record"?',
      'the guard names record["autor"], but Post has no field "autor"; did you mean "author"?',
    ]);
    expect(found[0]?.col).toBe('          when: "record.address.'.length + 1);
    expect(found.every((d) => d.line === 21)).toBe(true);
  });

  it('points into a folded block scalar, on the line the name is on', () => {
    const guard = '>-\n            record.title != "" &&\n            record.athor == ""';
    expect(names(spec(guard)).map(where)).toEqual(['unknown-cel-name@23:20']);
  });

  it('leaves a guard that does not parse to invalid-guard', () => {
    expect(check(spec('"record.titel =="')).map((d) => d.code)).toEqual(['invalid-guard']);
  });
});

describe('CEL auth rules name real fields', () => {
  it('checks each operation and transition rule against record, its input and principal', () => {
    const rules = `
      read: "record.autor == principal.subject"
      list: "input.title == ''"
      create: "input.title != '' && input.titl != '' && input.total == ''"
      update: "record.title == input.title"
      delete: "principal.rolez == []"
      transitions: { publish: "input.reason != '' && input.raeson != ''" }`;
    const found = names(spec('"true"', rules));
    expect(found.map((d) => `${where(d)} ${d.message}`)).toEqual([
      'unknown-cel-name@26:21 the rule names record.autor, but Post has no field "autor"; did you mean "author"?',
      'unknown-cel-name@27:20 the rule names input.title, but input (empty in a list rule) has no field "title"',
      'unknown-cel-name@28:43 the rule names input.titl, but the create body has no field "titl"; did you mean "title"?',
      'unknown-cel-name@28:63 the rule names input.total, but the create body has no field "total"',
      'unknown-cel-name@30:26 the rule names principal.rolez, but principal has no field "rolez"; did you mean "roles"?',
      'unknown-cel-name@31:60 the rule names input.raeson, but the input of publish has no field "raeson"; did you mean "reason"?',
    ]);
  });

  it('is an error: a spec with a misspelt rule field is not served', () => {
    const checked = checkSource({
      ...parseSpecText(spec('"true"', '{ read: "record.autor == principal.subject" }'), 'spec.yaml'),
      dir: '.',
    });
    expect(checked.spec).toBeUndefined();
    expect(checked.diagnostics.map((d) => d.severity)).toEqual(['error']);
  });
});

// dist/ is built once by test/global-setup.ts.
describe('ninefold check (the real CLI)', () => {
  it('prints a misspelt guard field as file:line:col inside the expression and exits 1', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'ninefold-cel-')), 'service.yaml');
    writeFileSync(file, spec('"size(record.titel) > 3"'));
    const run = spawnSync(process.execPath, ['bin/ninefold.js', 'check', file], { encoding: 'utf8' });
    expect(run.stdout).toBe(
      `${file}:21:30  error  unknown-cel-name  the guard names record.titel, but Post has no field "titel"; did you mean "title"?\n` +
        '1 error(s), 0 warning(s)\n',
    );
    expect(run.status).toBe(1);
  });
});
