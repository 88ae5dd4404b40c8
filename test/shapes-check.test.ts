import { describe, expect, it } from 'vitest';
import { checkSource } from '../src/spec/check.ts';
import type { Diagnostic } from '../src/spec/diagnostic-codes.ts';
import { parseSpecText } from '../src/spec/load.ts';

const check = (text: string): Diagnostic[] =>
  checkSource({ ...parseSpecText(text, 'spec.yaml'), dir: '.' }).diagnostics;
const show = (d: Diagnostic) => `${d.severity} ${d.code}@${d.line}:${d.col}`;

describe('ninefold check on the wire', () => {
  it('reports each wire mistake once, where it is written', () => {
    const found = check(`ninefold: 1
service: { name: bad, title: Bad, purpose: Wire mistakes. }
resources:
  User:
    object: user
    fields:
      firstName: { type: string }
      first_name: { type: string }
      object: { type: string }
      user: { type: string }
      lines: { type: array, items: { type: object, fields: { unitPrice: { type: integer }, unit_price: { type: integer } } } }
  Issue:
    fields: { title: { type: string } }
endpoints:
  wire: { naming: snake_case, list: { extras: { url: "{host}{path}" } } }
  User: { wire: { envelope: user, paging: starting_after, list: { total: count, items: count } } }
  Issue: { wire: { list: { items: null } } }
`);
    expect(found.map(show)).toEqual([
      'error wire-name-clash@5:13',
      'error wire-name-clash@8:7',
      'error wire-name-clash@11:92',
      'error unknown-list-template@15:54',
      'warning envelope-names-field@16:29',
      'error paging-member-unused@16:74',
      'error list-member-clash@16:74',
      'error bare-list-members@17:35',
    ]);
  });

  it('refuses a paging style it does not know', () => {
    const unknown = check(`ninefold: 1
service: { name: s, title: S, purpose: P. }
resources: { Issue: { fields: { title: { type: string } } } }
endpoints: { Issue: { wire: { paging: zigzag } } }
`);
    expect(unknown.map(show)).toEqual(['error invalid-value@4:39']);
  });
});
