import { createRequire } from 'node:module';
import type { DerivePlan } from '../../plan/types.ts';
import { kebabCase } from './naming.ts';

type Slugify = typeof import('@sindresorhus/slugify').default;
let loaded: Slugify | undefined;
/**
 * @sindresorhus/slugify, loaded by the first slug: its transliteration table takes a while to build, which a service
 * without derived slugs does not pay at start-up (Node 20.19+ requires this ES module synchronously).
 */
const slugify = (): Slugify => {
  loaded ??= (createRequire(import.meta.url)('@sindresorhus/slugify') as { default: Slugify }).default;
  return loaded;
};

/**
 * The slug of a text: "How to Train Your Dragon" → `how-to-train-your-dragon`, "Déjà vu & Straße" →
 * `deja-vu-and-strasse` (transliterated to ASCII by @sindresorhus/slugify; camelCase is not split). A text with no
 * Latin transliteration (日本語) keeps its letters: NFKC, lower-cased, every other run of characters a dash.
 */
export const slugOf = (text: string): string => {
  const ascii = slugify()(text, { decamelize: false });
  if (ascii) return ascii;
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-+|-+$/g, '');
};

/** `base` with `suffix` (`-2`) within `maxLength` characters: the base is cut, never the suffix, and no dash doubles. */
export const withSuffix = (base: string, suffix: string, maxLength?: number): string => {
  if (maxLength === undefined || [...base].length + suffix.length <= maxLength) return `${base}${suffix}`;
  const room = Math.max(0, maxLength - suffix.length);
  const cut = [...base].slice(0, room).join('').replace(/-+$/, '');
  return cut ? `${cut}${suffix}` : suffix.replace(/^-/, '').slice(0, Math.max(1, maxLength));
};

/** Whether `value` is the slug `base` or one of its suffixed forms (`base-2`, `base-17`). */
export const isSlugOf = (value: unknown, base: string, maxLength?: number): boolean => {
  if (typeof value !== 'string') return false;
  if (value === withSuffix(base, '', maxLength)) return true;
  const m = /-(\d+)$/.exec(value);
  return m !== null && value === withSuffix(base, m[0], maxLength);
};

/** The value a derived field takes from `values` when nothing clashes (the resource's name when the source gives none). */
export const derivedBase = (
  resource: { readonly name: string },
  derive: DerivePlan,
  values: Readonly<Record<string, unknown>>,
): string => {
  const source = values[derive.from];
  const slug = typeof source === 'string' ? slugOf(source) : '';
  return withSuffix(slug || kebabCase(resource.name), '', derive.maxLength);
};
