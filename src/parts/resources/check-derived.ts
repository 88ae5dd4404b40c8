import { type CheckContext, isRecord } from '../../spec/check-context.ts';
import type { PathSegment } from '../../spec/source-map.ts';
import { suggestion } from '../../spec/validate-shape.ts';
import { NORMALIZE_OPS, type NormalizeOp } from './field-schema.ts';
import { fieldMap, type Raw } from './lookup.ts';
import { SORTABLE_ITEMS, STRING_NORMALIZERS } from './normalize.ts';

/** Field types a slug can be taken from. */
const SLUG_SOURCES = new Set(['string', 'enum']);

/** Checks the `derive` of a resource's own fields: the source is a sibling string field, the field a string. */
export const checkDerived = (ctx: CheckContext, resourceName: string, resource: Raw) => {
  const fields = fieldMap(resource);
  for (const [name, field] of fields) {
    if (!isRecord(field.derive)) continue;
    const path: PathSegment[] = ['resources', resourceName, 'fields', name, 'derive'];
    const bad = (message: string, at: PathSegment[] = path) => ctx.report('invalid-derive', at, message);
    if (field.type !== 'string') bad(`"${name}" is ${String(field.type)}: a derived slug is a string`);
    if (field.default !== undefined)
      bad(`"${name}" is derived: a default would never be used`, [...path.slice(0, -1), 'default']);
    const from = field.derive.slug;
    if (typeof from !== 'string') continue;
    const source = fields.get(from);
    if (!source) {
      ctx.report(
        'unknown-field',
        [...path, 'slug'],
        `${resourceName} has no field "${from}"${suggestion(
          from,
          [...fields.keys()].filter((f) => f !== name),
        )}`,
      );
      continue;
    }
    if (from === name || isRecord(source.derive))
      bad(`"${from}" is itself derived: derive from a field clients write`, [...path, 'slug']);
    else if (!SLUG_SOURCES.has(String(source.type)))
      bad(`"${from}" is ${String(source.type)}: a slug is taken from a string or enum field`, [...path, 'slug']);
    else if (source.writeOnly === true)
      bad(`"${from}" is write-only: its slug would show what it hides`, [...path, 'slug']);
    if (field.type === 'string' && field.unique !== true)
      ctx.report(
        'derived-not-unique',
        path,
        `"${name}" is not unique: records with the same ${from} get the same slug (add unique: true for -2, -3… suffixes)`,
        'key',
      );
  }
};

/** Checks that each normaliser of a field (or of a field nested in it) applies to its type. */
export const checkNormalize = (ctx: CheckContext, field: Raw, path: readonly PathSegment[], label: string) => {
  if (!Array.isArray(field.normalize)) return;
  const items = isRecord(field.items) ? field.items : undefined;
  for (const [i, op] of field.normalize.entries()) {
    // An unknown name is the shape check's invalid-value already.
    if (!(NORMALIZE_OPS as readonly unknown[]).includes(op)) continue;
    const at = [...path, 'normalize', i];
    const onStrings = STRING_NORMALIZERS.has(op as NormalizeOp);
    const problem = onStrings
      ? field.type === 'string' || (field.type === 'array' && items?.type === 'string')
        ? undefined
        : `${op} applies to strings and arrays of strings, but "${label}" is ${describe(field)}`
      : field.type !== 'array'
        ? `${op} applies to arrays, but "${label}" is ${describe(field)}`
        : op === 'sort' && !SORTABLE_ITEMS.has(String(items?.type))
          ? `sort orders strings, dates and numbers, but the items of "${label}" are ${String(items?.type)}`
          : undefined;
    if (problem) ctx.report('invalid-normalize', at, problem);
  }
};

const describe = (field: Raw) =>
  field.type === 'array' && isRecord(field.items) ? `an array of ${String(field.items.type)}` : String(field.type);
