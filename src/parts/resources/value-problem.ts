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

const rangeProblem = (field: Raw, value: number): string | undefined => {
  const [min, max] = [num(field.min), num(field.max)];
  if (min !== undefined && value < min) return `is below min ${min}`;
  if (max !== undefined && value > max) return `is above max ${max}`;
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
    case 'decimal': {
      const n = typeof value === 'string' && type === 'decimal' && value.trim() !== '' ? Number(value) : value;
      return typeof n === 'number' && Number.isFinite(n) ? rangeProblem(field, n) : 'is not a number';
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
