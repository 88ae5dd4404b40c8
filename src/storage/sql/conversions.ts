import type { FieldType } from '../../parts/resources/field-schema.ts';
import type { FieldPlan } from '../../plan/types.ts';

/** Why some stored values cannot be kept exactly, and whether `--allow-data-loss` may change them anyway. */
export interface LossGroup {
  /** Completes "<Resource>.<field> changes type from A to B; N stored value(s) …". */
  readonly are: string;
  /** What --allow-data-loss does with them; undefined: it may not, and `because` says why. */
  readonly withLoss?: string;
  readonly because?: string;
}

/**
 * How the stored values of a field move from one type to another, on SQLite values (what the column holds), not
 * on JSON values. `loss` sorts a value that does not convert exactly into a group; `convert` gives the new stored
 * value (run only once every group present may be applied).
 */
export interface Conversion {
  /** Whether the values must be rewritten: the SQLite type or the representation changes. */
  readonly rewrites: boolean;
  readonly convert: (stored: unknown) => unknown;
  readonly loss?: (stored: unknown) => string | undefined;
  readonly groups?: Readonly<Record<string, LossGroup>>;
}

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const ROUNDS = 'rounds them to the nearest whole number, halves away from zero';
const OUT_OF_RANGE: LossGroup = {
  are: 'lie beyond ±(2^53−1), the range of an integer',
  because: 'no integer can hold them; change them first or keep the type',
};
const NOT_WHOLE: LossGroup = { are: 'are not whole numbers', withLoss: ROUNDS };

const same: Conversion = { rewrites: false, convert: (v) => v };
const rewrite = (convert: (v: unknown) => unknown): Conversion => ({ rewrites: true, convert });

/** Rounds half away from zero (Math.round rounds -2.5 to -2). */
const roundAway = (n: number) => Math.sign(n) * Math.round(Math.abs(n));

/** A stored decimal ("-3.50") rounded to an integer exactly, on its digits: no binary floating point on the way. */
const decimalToInteger = (text: string): { value: number; whole: boolean } | undefined => {
  const m = /^(-?)(\d+)(?:\.(\d*))?$/.exec(text);
  if (!m) return undefined;
  const fraction = m[3] ?? '';
  const up = (fraction[0] ?? '0') >= '5' ? 1n : 0n;
  const magnitude = BigInt(m[2] as string) + up;
  if (magnitude > BigInt(MAX_SAFE)) return undefined;
  return { value: (m[1] ? -1 : 1) * Number(magnitude), whole: !/[1-9]/.test(fraction) };
};

/** Integer digits a decimal field takes (its pattern in parts/resources/json-schema.ts). */
const integerDigits = (field: FieldPlan) => Math.max(1, (field.spec.precision ?? 18) - (field.spec.scale ?? 2));

const BY_CHANGE: Readonly<Record<string, (field: FieldPlan) => Conversion>> = {
  // Widenings: every stored value has an exact counterpart.
  'enum>string': () => same,
  'date>string': () => same,
  'datetime>string': () => same,
  'ref>string': () => same,
  'object>json': () => same,
  'array>json': () => same,
  // INTEGER → REAL: a STRICT REAL column turns the integer into a real itself.
  'integer>number': () => rewrite((v) => v),
  'integer>decimal': (field) => ({
    rewrites: true,
    convert: (v) => String(v),
    loss: (v) => (String(Math.abs(v as number)).length > integerDigits(field) ? 'precision' : undefined),
    groups: {
      precision: {
        are: `have more than ${integerDigits(field)} digits, more than the decimal's precision leaves before the point`,
        because: 'raise its precision',
      },
    },
  }),
  'string>json': () => rewrite((v) => JSON.stringify(v)),
  'integer>json': () => rewrite((v) => JSON.stringify(v)),
  'number>json': () => rewrite((v) => JSON.stringify(v)),
  'boolean>json': () => rewrite((v) => JSON.stringify(v === 1)),
  // Narrowings with a defined rounding.
  'number>integer': () => ({
    rewrites: true,
    convert: (v) => roundAway(v as number),
    loss: (v) => {
      const n = v as number;
      if (!Number.isFinite(n) || Math.abs(roundAway(n)) > MAX_SAFE) return 'range';
      return Number.isInteger(n) ? undefined : 'fraction';
    },
    groups: { range: OUT_OF_RANGE, fraction: NOT_WHOLE },
  }),
  'decimal>integer': () => ({
    rewrites: true,
    convert: (v) => decimalToInteger(v as string)?.value ?? null,
    loss: (v) => {
      const r = decimalToInteger(v as string);
      if (!r) return 'range';
      return r.whole ? undefined : 'fraction';
    },
    groups: { range: OUT_OF_RANGE, fraction: NOT_WHOLE },
  }),
};

/** Any other change: no value is known to fit, so every stored value is at stake and --allow-data-loss clears them. */
const unknownChange: Conversion = {
  rewrites: true,
  convert: () => null,
  loss: () => 'any',
  groups: {
    any: {
      are: 'may not fit the new type',
      withLoss: 'clears them: those records read with the field empty',
    },
  },
};

/** How a field's stored values change when its type goes from `from` to the field's type (a different one). */
export const conversionOf = (from: FieldType, field: FieldPlan): Conversion =>
  BY_CHANGE[`${from}>${field.type}`]?.(field) ?? unknownChange;

/**
 * What an enum field's records holding a value the spec no longer allows get with --allow-data-loss: the field's
 * default, else nothing (an optional field reads empty). A state field is refused: a record changes state only by a
 * transition. A required field without a default is refused: there is nothing valid to put there.
 */
export const enumReplacement = (
  field: FieldPlan,
): { readonly value: string | null; readonly says: string } | { readonly refused: string } => {
  if (field.isState) {
    return {
      refused:
        'a record changes state only by a transition: keep the state, move its records out of it by a transition, then remove it',
    };
  }
  const values = field.spec.values ?? [];
  if (field.hasDefault && values.includes(field.default as string)) {
    return { value: field.default as string, says: `sets them to the default "${field.default}"` };
  }
  if (field.required) return { refused: 'the field is required and has no default to give those records; declare one' };
  return { value: null, says: 'clears the field in those records' };
};

/** One line of a refused migration; `allowed`: --allow-data-loss may apply it. */
export interface Problem {
  readonly line: string;
  readonly allowed: boolean;
}

/** The lines a type change's loss groups (value counts by group, in group order) give, the same on every backend. */
export const lossProblems = (
  name: string,
  from: FieldType,
  field: FieldPlan,
  conversion: Conversion,
  groups: ReadonlyArray<{ readonly g: string; readonly n: number }>,
): Problem[] =>
  groups.map(({ g, n }) => {
    const group = conversion.groups?.[g] ?? { are: 'do not fit', because: 'unknown' };
    const what = `${name} changes type from ${from} to ${field.type}; ${n} stored value(s) ${group.are}`;
    return group.withLoss
      ? { line: `${what} (--allow-data-loss ${group.withLoss})`, allowed: true }
      : { line: `${what} (refused even with --allow-data-loss: ${group.because})`, allowed: false };
  });

/** The line of a type change in the migration report. */
export const retypeReport = (name: string, from: FieldType, field: FieldPlan, lost: number) =>
  `${name}: ${from} → ${field.type}${lost > 0 ? `, ${lost} value(s) changed` : ''}`;

/** The refusal of a unique field whose rewritten values collide. */
/** The id style of an existing table cannot change: ids name records in paths, references and events. */
export const idStyleChanged = (resource: string, style: string): Problem => ({
  line: `${resource}'s id style changed to ${style}: stored ids cannot be converted (keep the id style, or start from a new table)`,
  allowed: false,
});

export const uniqueBrokenLine = (resource: string, field: string): Problem => ({
  line: `${resource}.${field} must be unique, and after the change two or more records would hold the same value`,
  allowed: false,
});

/** A field or index newly declared unique over records that share a value: the data must change first. */
export const uniqueNewLine = (resource: string, fields: readonly string[]): Problem => ({
  line: `${resource}.${fields.length === 1 ? fields[0] : `(${fields.join(', ')})`} must be unique now, and two or more records hold the same value; make them differ, then start again`,
  allowed: false,
});

/**
 * What removing enum values that records hold means: a line per value, and, when --allow-data-loss may apply it,
 * the value those records get and the report line.
 */
export const enumOutcome = (
  name: string,
  field: FieldPlan,
  held: ReadonlyArray<{ readonly v: unknown; readonly n: number }>,
): { readonly problems: Problem[]; readonly apply?: { readonly value: string | null; readonly report: string } } => {
  const replacement = enumReplacement(field);
  const problems = held.map(({ v, n }) => {
    const what = `${name} no longer allows ${JSON.stringify(v)}, which ${n} record(s) hold`;
    return 'refused' in replacement
      ? { line: `${what} (refused even with --allow-data-loss: ${replacement.refused})`, allowed: false }
      : { line: `${what} (--allow-data-loss ${replacement.says})`, allowed: true };
  });
  if ('refused' in replacement) return { problems };
  const count = held.reduce((sum, h) => sum + h.n, 0);
  const report = `${name}: ${count} record(s) holding ${held.map((h) => JSON.stringify(h.v)).join(', ')} ${
    replacement.value === null ? 'cleared' : `set to ${JSON.stringify(replacement.value)}`
  }`;
  return { problems, apply: { value: replacement.value, report } };
};
