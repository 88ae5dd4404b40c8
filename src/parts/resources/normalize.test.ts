import { describe, expect, it } from 'vitest';
import { buildPlan } from '../../plan/build-plan.ts';
import { checkSource } from '../../spec/check.ts';
import { parseSpecText } from '../../spec/load.ts';
import { createNormalizer, normalizeFilterValue } from './normalize.ts';

const checked = checkSource({
  ...parseSpecText(
    `
ninefold: 1
service: { name: n }
resources:
  Thing:
    fields:
      name: { type: string, normalize: [collapseSpaces, trim, upper] }
      plain: { type: string }
      scores: { type: array, items: { type: integer }, normalize: [dedupe, sort] }
      lines:
        type: array
        items: { type: object, fields: { sku: { type: string, normalize: [trim, lower] } } }
      address: { type: object, fields: { city: { type: string, normalize: [trim] } } }
`,
    'n.yaml',
  ),
  dir: '.',
});
if (!checked.spec) throw new Error(JSON.stringify(checked.diagnostics));
const plan = buildPlan(checked.spec);
const thing = plan.resourcesByName.get('Thing');
if (!thing) throw new Error('no Thing');
const normalizer = createNormalizer(thing);

describe('normalisers', () => {
  it('rewrite strings before validation, inside objects and array items too, and leave other types alone', () => {
    const body = {
      name: '  a   b ',
      plain: ' x ',
      lines: [{ sku: ' AB ' }, 'odd'],
      address: { city: ' Paris ' },
      scores: 'not a list',
    };
    expect(normalizer.input(body)).toEqual({
      name: 'A B',
      plain: ' x ',
      lines: [{ sku: 'ab' }, 'odd'],
      address: { city: 'Paris' },
      scores: 'not a list',
    });
    expect(body.name).toBe('  a   b ');
  });

  it('dedupe and sort arrays after validation, numbers by value', () => {
    const values: Record<string, unknown> = { scores: [10, 9, 10, 100] };
    normalizer.arrays(values);
    expect(values.scores).toEqual([9, 10, 100]);
  });

  it('filters: whole-value comparisons get every string normaliser, partial matches only the case', () => {
    const name = thing.fieldsByName.get('name');
    if (!name) throw new Error('no name');
    expect(normalizeFilterValue(name, 'eq', ' a  b ')).toBe('A B');
    expect(normalizeFilterValue(name, 'in', [' a', 'b '])).toEqual(['A', 'B']);
    expect(normalizeFilterValue(name, 'prefix', 'a ')).toBe('A ');
  });
});
