import { type CheckContext, isRecord, recordEntries } from '../../spec/check-context.ts';
import type { PathSegment } from '../../spec/source-map.ts';
import { suggestion } from '../../spec/validate-shape.ts';
import { checkNormalize } from './check-derived.ts';
import type { Raw } from './lookup.ts';
import { RESERVED_FIELD_NAMES } from './system-fields.ts';
import { valueProblem } from './value-problem.ts';

/** What a field check needs to know about the rest of the spec. */
export interface FieldScope {
  readonly ctx: CheckContext;
  readonly resources: readonly string[];
}

const NUMERIC = ['integer', 'number', 'decimal'];
/** Each constraint and the types it applies to; `format` and `pattern` are reported on their own. */
const CONSTRAINT_TYPES: Record<string, readonly string[]> = {
  minLength: ['string'],
  maxLength: ['string'],
  min: NUMERIC,
  max: NUMERIC,
  minItems: ['array'],
  maxItems: ['array'],
  uniqueItems: ['array'],
  items: ['array'],
  values: ['enum'],
  precision: ['decimal'],
  scale: ['decimal'],
  fields: ['object'],
  to: ['ref'],
  onDelete: ['ref'],
  embed: ['ref'],
};
const RANGES = [
  ['min', 'max'],
  ['minLength', 'maxLength'],
  ['minItems', 'maxItems'],
  ['scale', 'precision'],
] as const;
const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * Flags the engine applies to a record's own fields only: a unique index needs a column of its own, defaults are
 * filled in field by field at the top, a delete looks for references in columns, not inside stored objects, and a
 * derived value is computed from a sibling of the record.
 */
const TOP_LEVEL_FLAGS = ['unique', 'default', 'onDelete', 'derive'] as const;

/**
 * Checks a map of fields (resource fields, object fields, transition inputs, request payloads). `nested`: the
 * fields sit inside an object or array field.
 */
export const checkFields = (
  scope: FieldScope,
  fields: unknown,
  path: readonly PathSegment[],
  topLevel: boolean,
  nested = false,
) => {
  for (const [name, field] of recordEntries<Raw>(fields)) {
    const reserved = topLevel ? RESERVED_FIELD_NAMES.has(name) : PROTOTYPE_KEYS.has(name);
    if (reserved) scope.ctx.report('reserved-field-name', [...path, name], `"${name}" is owned by the engine`, 'key');
    checkField(scope, field, [...path, name], name, nested);
  }
};

/** Checks one field and everything nested in it. */
export const checkField = (
  scope: FieldScope,
  field: Raw,
  path: readonly PathSegment[],
  label: string,
  nested = false,
) => {
  const { ctx } = scope;
  const type = typeof field.type === 'string' ? field.type : undefined;
  if (type === undefined) return;
  const at = (key: string) => [...path, key];
  if (nested)
    for (const flag of TOP_LEVEL_FLAGS)
      if (field[flag] !== undefined)
        ctx.report(
          'nested-field-flag',
          at(flag),
          `"${label}" sits inside an object or array, where ${flag} is not applied; only a resource's own fields take it`,
          'key',
        );

  for (const key of ['format', 'pattern']) {
    if (field[key] !== undefined && type !== 'string')
      ctx.report('format-type-mismatch', at(key), `${key} applies to strings, but "${label}" is ${type}`, 'key');
  }
  for (const [key, types] of Object.entries(CONSTRAINT_TYPES)) {
    if (field[key] !== undefined && !types.includes(type))
      ctx.report(
        'constraint-type-mismatch',
        at(key),
        `${key} applies to ${types.join('/')}, but "${label}" is ${type}`,
        'key',
      );
  }
  checkTypeDetail(scope, field, path, type);
  checkNormalize(ctx, field, path, label);
  for (const [low, high] of RANGES) {
    const [a, b] = [field[low], field[high]];
    if (typeof a === 'number' && typeof b === 'number' && a > b)
      ctx.report('invalid-range', at(low), `${low} ${a} is above ${high} ${b}`);
  }
  if (typeof field.pattern === 'string') {
    try {
      new RegExp(field.pattern, 'u');
    } catch (error) {
      const reason = error instanceof Error ? error.message : 'invalid';
      ctx.report('invalid-pattern', at('pattern'), `not a valid regular expression: ${reason}`);
    }
  }
  if (field.default !== undefined) {
    const problem = valueProblem(field, field.default);
    if (problem) ctx.report('invalid-default', at('default'), `the default ${problem}`);
  }
  if (field.readOnly === true && field.writeOnly === true)
    ctx.report('conflicting-flags', at('writeOnly'), `"${label}" cannot be both readOnly and writeOnly`, 'key');
  if (field.required === true && field.readOnly === true && field.default === undefined)
    ctx.report(
      'conflicting-flags',
      at('readOnly'),
      `"${label}" is required and readOnly without a default: no caller could ever set it`,
      'key',
    );

  if (type === 'object') checkFields(scope, field.fields, at('fields'), false, true);
  if (type === 'array' && isRecord(field.items)) checkField(scope, field.items, at('items'), `${label}[]`, true);
};

const checkTypeDetail = (scope: FieldScope, field: Raw, path: readonly PathSegment[], type: string) => {
  const { ctx } = scope;
  const missing = (what: string) =>
    ctx.report('missing-type-detail', [...path, 'type'], `a ${type} field needs ${what}`);
  if (type === 'enum' && (!Array.isArray(field.values) || field.values.length === 0)) missing('values');
  if (type === 'array' && field.items === undefined) missing('items');
  if (type === 'ref') {
    if (typeof field.to !== 'string') missing('`to`, the resource it refers to');
    else if (!scope.resources.includes(field.to))
      ctx.report(
        'unknown-resource',
        [...path, 'to'],
        `no resource "${field.to}"${suggestion(field.to, scope.resources)}`,
      );
  }
  if (type === 'string' && field.format === 'pattern' && typeof field.pattern !== 'string')
    ctx.report('missing-type-detail', [...path, 'format'], 'format: pattern needs a pattern');
};
