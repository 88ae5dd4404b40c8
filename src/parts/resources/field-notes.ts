import type { FieldSpec, NormalizeOp } from './field-schema.ts';

/** How each normaliser reads in a sentence. */
const NORMALIZE_WORDS: Readonly<Record<NormalizeOp, string>> = {
  trim: 'trimmed',
  lower: 'lower-cased',
  upper: 'upper-cased',
  collapseSpaces: 'with runs of spaces made one',
  dedupe: 'de-duplicated',
  sort: 'sorted',
};

/** `the slug of title, derived again when title changes`. */
export const derivedPhrase = (derive: NonNullable<FieldSpec['derive']>): string =>
  `the slug of ${derive.slug}, ${
    (derive.onChange ?? 'rederive') === 'rederive'
      ? `derived again when ${derive.slug} changes`
      : 'kept when it changes'
  }`;

/** The sentence OpenAPI descriptions carry for a derived field. */
export const derivedSentence = (f: FieldSpec): string | undefined =>
  f.derive
    ? `Set by the service: ${derivedPhrase(f.derive)}${f.unique ? '; a value already taken gets a -2, -3… suffix' : ''}.`
    : undefined;

const sentence = (words: readonly string[]) =>
  words.length > 1 ? `${words.slice(0, -1).join(', ')} and ${words.at(-1)}` : (words[0] ?? '');

/** `Normalised when it comes in (bodies and list filters): trimmed and lower-cased.` */
export const normalizedSentence = (f: FieldSpec): string | undefined => {
  const ops = f.normalize ?? [];
  if (ops.length === 0) return undefined;
  const strings = sentence(ops.filter((op) => op !== 'dedupe' && op !== 'sort').map((op) => NORMALIZE_WORDS[op]));
  const arrays = sentence(ops.filter((op) => op === 'dedupe' || op === 'sort').map((op) => NORMALIZE_WORDS[op]));
  const what =
    f.type === 'array'
      ? [strings && `items ${strings}`, arrays && `the list ${arrays}`].filter(Boolean).join(', then ')
      : strings;
  return `Normalised when it comes in (bodies and list filters): ${what}.`;
};
