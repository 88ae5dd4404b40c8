import { FAILSAFE_SCHEMA, load, Type } from 'js-yaml';

/**
 * A quick first read of a spec's YAML with js-yaml, several times faster than the `yaml` package on a cold start
 * (one spec is parsed once per process, before any of it is optimised), for the common case: a well-formed spec
 * written with plain YAML. Anything else answers undefined and the caller parses with `yaml`, which gives
 * positions and the error messages. The scalar rules are the `yaml` package's YAML 1.2 core schema, rule for rule
 * and in its order, so both parsers give the same value for the same text; test/fast-yaml.test.ts compares them.
 */

// yaml's core schema, in the order it tries them: null, bool, int (octal, decimal, hex), float (nan/inf, exp, plain).
const NULL = /^(?:~|[Nn]ull|NULL)?$/;
const BOOL = /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/;
const INT_OCT = /^0o[0-7]+$/;
const INT = /^[-+]?[0-9]+$/;
const INT_HEX = /^0x[0-9a-fA-F]+$/;
const FLOAT_SPECIAL = /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/;
const FLOAT_EXP = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/;
const FLOAT = /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/;

const CORE_1_2 = FAILSAFE_SCHEMA.extend({
  implicit: [
    new Type('tag:yaml.org,2002:null', {
      kind: 'scalar',
      resolve: (data: string | null) => data === null || NULL.test(data),
      construct: () => null,
    }),
    new Type('tag:yaml.org,2002:bool', {
      kind: 'scalar',
      resolve: (data: string | null) => data !== null && BOOL.test(data),
      construct: (data: string) => data[0] === 't' || data[0] === 'T',
    }),
    new Type('tag:yaml.org,2002:int', {
      kind: 'scalar',
      resolve: (data: string | null) => data !== null && (INT_OCT.test(data) || INT.test(data) || INT_HEX.test(data)),
      construct: (data: string) =>
        INT_OCT.test(data)
          ? Number.parseInt(data.slice(2), 8)
          : INT.test(data)
            ? Number.parseInt(data, 10)
            : Number.parseInt(data.slice(2), 16),
    }),
    new Type('tag:yaml.org,2002:float', {
      kind: 'scalar',
      resolve: (data: string | null) =>
        data !== null && (FLOAT_SPECIAL.test(data) || FLOAT_EXP.test(data) || FLOAT.test(data)),
      construct: (data: string) =>
        FLOAT_SPECIAL.test(data)
          ? data.slice(-3).toLowerCase() === 'nan'
            ? Number.NaN
            : data[0] === '-'
              ? Number.NEGATIVE_INFINITY
              : Number.POSITIVE_INFINITY
          : Number.parseFloat(data),
    }),
  ],
});

/**
 * What only the `yaml` package reads as the language defines it, or guards: anchors and aliases (`yaml` refuses
 * alias bombs), tags, directives. Matched at the start of a node; a false alarm (a `*` inside a plain sentence)
 * only costs the slower parse.
 */
const SLOW_SYNTAX = /(?:^|[\s,[{])[&*!]|^%/m;

/** A key `yaml` turns into "" (a null key), where js-yaml writes "null". */
const NULL_KEYS = new Set(['null', 'Null', 'NULL', '~', '']);

const hasNullKey = (value: unknown): boolean => {
  if (Array.isArray(value)) return value.some(hasNullKey);
  if (value === null || typeof value !== 'object') return false;
  for (const [key, item] of Object.entries(value)) if (NULL_KEYS.has(key) || hasNullKey(item)) return true;
  return false;
};

/** The spec's value, or undefined when the text needs the full parser (see above), including any error. */
export const fastParseYaml = (text: string): unknown => {
  if (SLOW_SYNTAX.test(text)) return undefined;
  let value: unknown;
  try {
    value = load(text, { schema: CORE_1_2, json: false });
  } catch {
    return undefined;
  }
  // An empty document is null to `yaml`; js-yaml has undefined.
  if (value === undefined || hasNullKey(value)) return undefined;
  return value;
};
