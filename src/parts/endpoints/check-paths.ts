import { type CheckContext, isRecord } from '../../spec/check-context.ts';
import type { PathSegment } from '../../spec/source-map.ts';
import { suggestion } from '../../spec/validate-shape.ts';
import { asRecord, fieldMap, knownFieldNames, type Raw } from '../resources/lookup.ts';
import { bindPath, keyModel } from './path-binding.ts';
import { itemPathOf } from './routes.ts';
import { OPERATIONS } from './schema.ts';

const ITEM_OPERATIONS = new Set(['get', 'update', 'replace', 'delete']);

/**
 * Paths and keys of one resource's entry: every path parameter binds a parent or the record, a key names unique
 * fields, and an item path names the record.
 */
export const checkResourcePaths = (ctx: CheckContext, name: string, resource: Raw, entry: Raw) => {
  const model = keyModel(ctx.spec);
  const at = (...rest: PathSegment[]): PathSegment[] => ['endpoints', name, ...rest];
  const overrides = asRecord(entry.overrides);
  const paths: Array<[path: string, item: boolean, pointer: PathSegment[]]> = [];
  if (typeof entry.path === 'string') paths.push([entry.path, false, at('path')]);
  for (const op of OPERATIONS) {
    const path = asRecord(overrides[op]).path;
    if (typeof path === 'string') paths.push([path, ITEM_OPERATIONS.has(op), at('overrides', op, 'path')]);
  }
  // The item path made from the collection path and the key, when no operation gives its own.
  if (typeof asRecord(overrides.get).path !== 'string')
    paths.push([itemPathOf(ctx.spec, name, resource), true, entry.key !== undefined ? at('key') : at('path')]);
  const reported = new Set<string>();
  for (const [path, item, pointer] of paths) {
    const binding = bindPath(model, name, path, item);
    for (const param of binding.unbound) {
      // The item path made from the collection path repeats its parameters: each is reported once.
      if (reported.has(`${JSON.stringify(pointer)}{${param}}`)) continue;
      reported.add(`${JSON.stringify(pointer)}{${param}}`);
      ctx.report(
        'unmatched-path-parameter',
        pointer,
        `{${param}} binds nothing: name a ref field of ${name} ({customer} or {customerId}), or end an item path with its key`,
      );
    }
    if (item && binding.item.length === 0 && binding.unbound.length === 0)
      ctx.report('unmatched-path-parameter', pointer, `${path} does not name one ${name}: end it with its key or {id}`);
  }
  checkKey(ctx, name, resource, entry.key);
};

const checkKey = (ctx: CheckContext, name: string, resource: Raw, key: unknown) => {
  if (key === undefined) return;
  const fields = Array.isArray(key) ? key : [key];
  const known = [...knownFieldNames(resource)];
  const declared = fieldMap(resource);
  const pointer = (i: number): PathSegment[] =>
    Array.isArray(key) ? ['endpoints', name, 'key', i] : ['endpoints', name, 'key'];
  let ok = true;
  for (const [i, field] of fields.entries()) {
    if (typeof field === 'string' && declared.has(field)) continue;
    ok = false;
    ctx.report(
      'unknown-field',
      pointer(i),
      `${name} has no field "${String(field)}"${suggestion(String(field), known)}`,
    );
  }
  if (!ok) return;
  if (fields.length === 1) {
    if (declared.get(fields[0] as string)?.unique !== true)
      ctx.report('key-not-unique', pointer(0), `${name}.${String(fields[0])} is a key: declare it unique: true`);
    return;
  }
  const wanted = [...fields].map(String).sort().join(',');
  const uniques = [
    ...(Array.isArray(resource.unique) ? resource.unique : []),
    ...(Array.isArray(resource.indexes)
      ? resource.indexes.filter((i) => isRecord(i) && i.unique === true).map((i) => (i as Raw).fields)
      : []),
  ];
  if (!uniques.some((u) => Array.isArray(u) && [...u].map(String).sort().join(',') === wanted))
    ctx.report(
      'key-not-unique',
      ['endpoints', name, 'key'],
      `no compound unique key covers [${fields.join(', ')}]: add unique: [[${fields.join(', ')}]] to resource ${name}`,
    );
};
