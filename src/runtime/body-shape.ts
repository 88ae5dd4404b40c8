import type { FieldError } from '../parts/errors/api-error.ts';
import type { JsonSchema } from '../parts/resources/json-schema.ts';

/** What one pass over a body's keys and arrays found, before any value is validated. */
export interface ShapeReport {
  /** Keys and array items the validator would have to check: a bound on how many errors it can report. */
  values: number;
  /** Keys the schema does not have and arrays longer than their maxItems, all of them counted. */
  problems: number;
  /** The first of those problems, at most `cap`, in document order. */
  readonly errors: FieldError[];
  /** Whether every problem is an unknown key of the body's top-level object. */
  topLevelUnknownOnly: boolean;
}

export type ShapeCheck = (body: unknown, cap: number) => ShapeReport;

type Walk = (value: unknown, path: string, report: ShapeReport, cap: number) => void;

/** Keys longer than this are not echoed: the error points at the object that holds them. */
const MAX_ECHOED_KEY = 256;

export const escapePointer = (s: string) => s.replaceAll('~', '~0').replaceAll('/', '~1');

/** The error for a key the object's schema does not have; `path` is the object's JSON Pointer (without `#`). */
export const unknownKeyError = (path: string, key: string): FieldError =>
  key.length > MAX_ECHOED_KEY
    ? {
        pointer: `#${path}`,
        code: 'unknown_field',
        message: `a key of ${key.length} characters is not a field of this resource`,
      }
    : {
        pointer: `#${path}/${escapePointer(key)}`,
        code: 'unknown_field',
        message: `${key} is not a field of this resource`,
      };

const hasType = (schema: JsonSchema, type: string) =>
  schema.type === type || (Array.isArray(schema.type) && schema.type.includes(type));

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Counts a problem; its error is only built while there is room for it. */
const record = (report: ShapeReport, cap: number, error: () => FieldError, topLevelUnknown: boolean) => {
  report.problems++;
  if (!topLevelUnknown) report.topLevelUnknownOnly = false;
  if (report.errors.length < cap) report.errors.push(error());
};

/** A walker for the parts of a schema that bound a body's shape, or undefined where nothing does. */
const compileWalk = (schema: JsonSchema): Walk | undefined => {
  // A nullable value whose schema has no single type (json) is `anyOf: [schema, null]`.
  if (Array.isArray(schema.anyOf)) {
    const branches = (schema.anyOf as JsonSchema[]).filter((b) => b.type !== 'null');
    return branches.length === 1 && branches[0] ? compileWalk(branches[0]) : undefined;
  }
  if (hasType(schema, 'object') && schema.additionalProperties === false) {
    const properties = Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>);
    // A Map, so that a key such as `toString` finds nothing on a prototype; null where a field needs no walk.
    const children = new Map(properties.map(([name, child]) => [name, compileWalk(child) ?? null]));
    return (value, path, report, cap) => {
      if (!isObject(value)) return;
      for (const key of Object.keys(value)) {
        report.values++;
        const child = children.get(key);
        if (child === undefined) record(report, cap, () => unknownKeyError(path, key), path === '');
        else child?.(value[key], `${path}/${escapePointer(key)}`, report, cap);
      }
    };
  }
  if (hasType(schema, 'array')) {
    const max = typeof schema.maxItems === 'number' ? schema.maxItems : Number.POSITIVE_INFINITY;
    const item = isObject(schema.items) ? compileWalk(schema.items as JsonSchema) : undefined;
    return (value, path, report, cap) => {
      if (!Array.isArray(value)) return;
      report.values += value.length;
      if (value.length > max) {
        const error = (): FieldError => ({
          pointer: `#${path}`,
          code: 'invalid_count',
          message: `must NOT have more than ${max} items`,
        });
        record(report, cap, error, false);
        return;
      }
      if (item) for (let i = 0; i < value.length; i++) item(value[i], `${path}/${i}`, report, cap);
    };
  }
  return undefined;
};

/**
 * Compiles the shape check of a body schema: one pass over the body's keys and arrays that counts what a
 * validator would check and finds keys the schema cannot accept and arrays over their maxItems. It allocates
 * nothing per value beyond the first `cap` errors, so a hostile body costs a walk, not an error per key.
 */
export const compileShapeCheck = (schema: JsonSchema): ShapeCheck => {
  const walk = compileWalk(schema);
  return (body, cap) => {
    const report: ShapeReport = { values: 0, problems: 0, errors: [], topLevelUnknownOnly: true };
    walk?.(body, '', report, cap);
    return report;
  };
};
