import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { checkSource } from '../src/spec/check.ts';
import type { Diagnostic } from '../src/spec/diagnostic-codes.ts';
import { parseSpecText } from '../src/spec/load.ts';

const check = (text: string): Diagnostic[] =>
  checkSource({ ...parseSpecText(text, 'spec.yaml'), dir: '.' }).diagnostics;
const show = (d: Diagnostic) => `${d.severity} ${d.code}@${d.line}:${d.col} ${d.message}`;

describe('flags a nested field cannot take', () => {
  it('refuses unique, default and onDelete inside objects and arrays, each at its key', () => {
    const found = check(`ninefold: 1
service: { name: s }
resources:
  Product: { fields: { sku: { type: string, unique: true, default: x } } }
  Order:
    fields:
      lines:
        type: array
        items:
          type: object
          fields:
            sku: { type: string, unique: true }
            qty: { type: integer, default: 1 }
            product: { type: ref, to: Product, onDelete: cascade }
      address: { type: object, fields: { city: { type: string, default: Paris } } }
      tags: { type: array, items: { type: string, unique: true } }
    states:
      initial: cart
      final: [placed]
      transitions:
        place: { from: cart, to: placed, input: { note: { type: string, default: none } } }
`);
    expect(found.map(show)).toEqual([
      'error nested-field-flag@12:34 "sku" sits inside an object or array, where unique is not applied; only a resource\'s own fields take it',
      'error nested-field-flag@13:35 "qty" sits inside an object or array, where default is not applied; only a resource\'s own fields take it',
      'error nested-field-flag@14:48 "product" sits inside an object or array, where onDelete is not applied; only a resource\'s own fields take it',
      'error nested-field-flag@15:64 "city" sits inside an object or array, where default is not applied; only a resource\'s own fields take it',
      'error nested-field-flag@16:51 "tags[]" sits inside an object or array, where unique is not applied; only a resource\'s own fields take it',
    ]);
  });
});

describe('list options on a read-only field nothing fills', () => {
  const spec = (list: string) => `ninefold: 1
service: { name: s }
resources:
  Order:
    fields:
      total: { type: decimal, readOnly: true }
      paymentRef: { type: string, readOnly: true }
      channel: { type: string, readOnly: true, default: web }
      note: { type: string }
    states:
      initial: cart
      final: [paid]
      transitions:
        pay: { from: cart, to: paid, input: { paymentRef: { type: string } } }
endpoints:
  Order: { list: ${list} }
`;

  it('refuses a filter, a sort and a default sort on it', () => {
    const found = check(spec('{ filter: [total, note], sort: [-total, note], defaultSort: "note,-total" }'));
    const never = 'is read-only and nothing fills it (no default, no transition input of that name)';
    expect(found.map(show)).toEqual([
      `error never-filled-field@16:29 cannot filter on "total": it ${never}, so it never holds a value`,
      `error never-filled-field@16:50 cannot sort on "total": it ${never}, so it never holds a value`,
      `error never-filled-field@16:78 cannot sort on "total": it ${never}, so it never holds a value`,
    ]);
  });

  it('accepts read-only fields that are filled: by a transition input, a default, the state, the system', () => {
    const found = check(
      spec('{ filter: [paymentRef, channel, status, id], sort: [paymentRef, channel, status, updatedAt] }'),
    );
    expect(found).toEqual([]);
  });
});

// dist/ is built once by test/global-setup.ts.
describe('the example specs', () => {
  it.each(['examples/orders/service.yaml', 'examples/orders-ts/service.ts', 'examples/empty/service.yaml'])(
    '%s has no problem at all',
    (file) => {
      const run = spawnSync(process.execPath, ['bin/ninefold.js', 'check', file], { encoding: 'utf8' });
      expect(run.stdout).toBe(`${file}: no problems found\n`);
      expect(run.status).toBe(0);
    },
  );
});
