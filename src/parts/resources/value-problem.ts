import { isRecord } from '../../spec/check-context.ts';
import type { Raw } from './lookup.ts';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

const num = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);

/** A valid calendar date written YYYY-MM-DD (2026-02-30 is not). */
export const isIsoDate = (text: unknown): text is string =>
  typeof text === 'string' &&
  DATE.test(text) &&
  !Number.isNaN(Date.parse(`${text}T00:00:00Z`)) &&
  new Date(`${text}T00:00:00Z`).toISOString().startsWith(text);

/** An RFC 3339 date-time with its offset (2026-02-03T04:05:06Z, …+01:00). */
export const isDateTime = (text: unknown): text is string =>
  typeof text === 'string' && DATETIME.test(text) && !Number.isNaN(Date.parse(text));

const stringProblem = (field: Raw, value: string): string | undefined => {
  const [minLength, maxLength] = [num(field.minLength), num(field.maxLength)];
  const length = [...value].length;
  if (minLength !== undefined && length < minLength) return `is shorter than minLength ${minLength}`;
  if (maxLength !== undefined && length > maxLength) return `is longer than maxLength ${maxLength}`;
  const formats: Record<string, RegExp> = { email: EMAIL, uuid: UUID, ipv4: IPV4 };
  const format = typeof field.format === 'string' ? formats[field.format] : undefined;
  if (format && !format.test(value)) return `is not a valid ${String(field.format)}`;
  if (typeof field.pattern === 'string') {
    try {
      if (!new RegExp(`^(?:${field.pattern})$`, 'u').test(value)) return `does not match the pattern ${field.pattern}`;
    } catch {
      // An invalid pattern is reported on its own.
    }
  }
  return undefined;
};

/** A decimal written out (`-12.50`, or a bound such as `1e-7` as JavaScript prints it); the exponent is capped. */
const DECIMAL = /^([+-]?)(\d+)(?:\.(\d+))?(?:e([+-]?\d{1,3}))?$/i;

/** A decimal as an exact integer count of 10^-scale units. */
const parseDecimal = (text: string): { units: bigint; scale: number } | undefined => {
  const m = DECIMAL.exec(text);
  if (!m) return undefined;
  const [, sign = '', whole = '', fraction = '', exponent = '0'] = m;
  const units = BigInt(`${sign === '-' ? '-' : ''}${whole}${fraction}`);
  const scale = fraction.length - Number(exponent);
  return scale >= 0 ? { units, scale } : { units: units * 10n ** BigInt(-scale), scale: 0 };
};

/**
 * Compares two decimals exactly, as text or numbers: negative, zero or positive like a sort comparator;
 * undefined when either is not a decimal. Floats would call 0.30000000000000001 and 0.3 equal.
 */
export const compareDecimals = (a: string | number, b: string | number): number | undefined => {
  const [x, y] = [parseDecimal(String(a)), parseDecimal(String(b))];
  if (!x || !y) return undefined;
  const scale = Math.max(x.scale, y.scale);
  const difference = x.units * 10n ** BigInt(scale - x.scale) - y.units * 10n ** BigInt(scale - y.scale);
  return difference < 0n ? -1 : difference > 0n ? 1 : 0;
};

/** Why a number, or a decimal compared exactly, is outside the field's min and max. */
export const rangeProblem = (field: Raw, value: number | string): string | undefined => {
  const [min, max] = [num(field.min), num(field.max)];
  const compare = (bound: number) =>
    typeof value === 'string' ? (compareDecimals(value, bound) ?? 0) : value < bound ? -1 : value > bound ? 1 : 0;
  if (min !== undefined && compare(min) < 0) return `is below min ${min}`;
  if (max !== undefined && compare(max) > 0) return `is above max ${max}`;
  return undefined;
};

const arrayProblem = (field: Raw, value: unknown[]): string | undefined => {
  const [minItems, maxItems] = [num(field.minItems), num(field.maxItems)];
  if (minItems !== undefined && value.length < minItems) return `has fewer than minItems ${minItems}`;
  if (maxItems !== undefined && value.length > maxItems) return `has more than maxItems ${maxItems}`;
  if (!isRecord(field.items)) return undefined;
  for (const [i, item] of value.entries()) {
    const problem = valueProblem(field.items, item);
    if (problem) return `item ${i} ${problem}`;
  }
  return undefined;
};

const objectProblem = (field: Raw, value: Raw): string | undefined => {
  const fields = isRecord(field.fields) ? field.fields : {};
  for (const [name, sub] of Object.entries(fields)) {
    if (!isRecord(sub)) continue;
    if (!(name in value)) {
      if (sub.required === true && sub.default === undefined) return `lacks the required field "${name}"`;
      continue;
    }
    const problem = valueProblem(sub, value[name]);
    if (problem) return `field "${name}" ${problem}`;
  }
  const unknown = Object.keys(value).find((k) => !(k in fields));
  return unknown ? `has the unknown field "${unknown}"` : undefined;
};

/** Why `value` does not fit `field`, or undefined when it does. Unknown types pass: the shape check reports them. */
export const valueProblem = (field: Raw, value: unknown): string | undefined => {
  if (value === null) return field.nullable === true ? undefined : 'is null but the field is not nullable';
  const type = field.type;
  switch (type) {
    case 'string':
      return typeof value === 'string' ? stringProblem(field, value) : 'is not a string';
    case 'integer':
      return Number.isInteger(value) ? rangeProblem(field, value as number) : 'is not an integer';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? rangeProblem(field, value) : 'is not a number';
    case 'decimal': {
      const text = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
      return typeof text === 'string' && compareDecimals(text, 0) !== undefined
        ? rangeProblem(field, text)
        : 'is not a number';
    }
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'is not a boolean';
    case 'date':
      return isIsoDate(value) ? undefined : 'is not a date (YYYY-MM-DD)';
    case 'datetime':
      return isDateTime(value) ? undefined : 'is not an RFC 3339 date-time';
    case 'enum': {
      const values = Array.isArray(field.values) ? field.values : [];
      return values.includes(value) ? undefined : `is not one of ${values.join(', ')}`;
    }
    case 'ref':
      return typeof value === 'string' ? undefined : 'is not an id';
    case 'array':
      return Array.isArray(value) ? arrayProblem(field, value) : 'is not an array';
    case 'object':
      return isRecord(value) ? objectProblem(field, value) : 'is not an object';
    default:
      return undefined;
  }
};
