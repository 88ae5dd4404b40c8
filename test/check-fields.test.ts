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
