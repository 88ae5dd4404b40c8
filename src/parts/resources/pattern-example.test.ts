import { describe, expect, it } from 'vitest';
import { patternExample } from './pattern-example.ts';

describe('patternExample', () => {
  it.each([
    '^97[89]-\\d{10}$',
    '^[A-Z]{3}-\\d{3,5}$',
    '^(EU|US)-[a-z0-9]+$',
    '^[^@\\s]+@[^@\\s]+$',
    '^\\+?[0-9 ]{7,20}$',
    '^(?:ab|cd)_x?y*z+$',
  ])('gives a string %s accepts', (pattern) => {
    const text = patternExample(pattern);
    expect(text).toBeDefined();
    expect(new RegExp(pattern).test(text ?? '')).toBe(true);
  });

  it('gives nothing for a pattern it cannot read', () => {
    expect(patternExample('^(?=a)b$')).toBeUndefined();
    expect(patternExample('^(a)\\1$')).toBeUndefined();
  });
});
