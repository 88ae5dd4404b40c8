import { describe, expect, it } from 'vitest';
import { derivedBase, isSlugOf, slugOf, withSuffix } from './slug.ts';

describe('slugs', () => {
  it('transliterates, lower-cases and dashes; keeps letters of scripts with no Latin form', () => {
    expect(slugOf('How to train your dragon')).toBe('how-to-train-your-dragon');
    expect(slugOf('  --Hi__there--  ')).toBe('hi-there');
    expect(slugOf('iPhone review')).toBe('iphone-review');
    expect(slugOf('Привет мир')).toBe('privet-mir');
    expect(slugOf('日本語 の タイトル!')).toBe('日本語-の-タイトル');
    expect(slugOf('!!!')).toBe('');
  });

  it('cuts the base, never the suffix, to maxLength, and leaves no dash before the suffix', () => {
    expect(withSuffix('abc-def', '-2')).toBe('abc-def-2');
    expect(withSuffix('abc-def', '-2', 6)).toBe('abc-2');
    expect(withSuffix('abcdef', '', 4)).toBe('abcd');
    expect(withSuffix('abcdef', '-12', 3)).toBe('12');
  });

  it('knows the forms of a base', () => {
    expect(isSlugOf('moving-2', 'moving')).toBe(true);
    expect(isSlugOf('moving', 'moving')).toBe(true);
    expect(isSlugOf('moving-on', 'moving')).toBe(false);
    expect(isSlugOf('abc-2', 'abc-def', 6)).toBe(true);
    expect(isSlugOf(null, 'moving')).toBe(false);
  });

  it('falls back to the resource name', () => {
    const derive = { kind: 'slug', from: 'title', onChange: 'rederive' } as const;
    expect(derivedBase({ name: 'BlogPost' }, derive, { title: '???' })).toBe('blog-post');
    expect(derivedBase({ name: 'BlogPost' }, derive, {})).toBe('blog-post');
  });
});
