import type { PathBinding } from '../../plan/types.ts';
import type { ServiceSpec } from '../../spec/schema.ts';
import { asRecord, fieldMap, resourceMap } from '../resources/lookup.ts';

/** What binding a path needs to know of the resources: their keys and where their references point. */
export interface KeyModel {
  /** The natural key fields of a resource (empty: its id). */
  keyOf(resource: string): readonly string[];
  /** The resource a ref field points to; undefined when the field is not a ref. */
  refTarget(resource: string, field: string): string | undefined;
}

/** The key model of a spec, read defensively (checks run it on specs that may be wrong). */
export const keyModel = (spec: ServiceSpec): KeyModel => {
  const resources = resourceMap(spec);
  return {
    keyOf(resource) {
      const key = asRecord(asRecord(spec.endpoints)[resource]).key;
      if (typeof key === 'string') return [key];
      return Array.isArray(key) ? key.filter((k): k is string => typeof k === 'string') : [];
    },
    refTarget(resource, field) {
      const f = fieldMap(resources.get(resource)).get(field);
      return f?.type === 'ref' && typeof f.to === 'string' && resources.has(f.to) ? f.to : undefined;
    },
  };
};

/** Names of `{param}` segments in a path template. */
const paramsOf = (path: string): string[] => [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] ?? '');

/** How many path parameters name one record of `resource`: one for an id, one per key field (more for ref keys). */
export const keyArity = (model: KeyModel, resource: string, seen: ReadonlySet<string> = new Set()): number => {
  const key = model.keyOf(resource);
  if (key.length === 0 || seen.has(resource)) return 1;
  const inner = new Set([...seen, resource]);
  return key.reduce((n, field) => {
    const target = model.refTarget(resource, field);
    return n + (target ? keyArity(model, target, inner) : 1);
  }, 0);
};

/** The ref field a parameter names: {customer} or {customerId} → customer. */
const refParam = (model: KeyModel, resource: string, param: string): string | undefined => {
  if (model.refTarget(resource, param)) return param;
  const stem = param.replace(/Id$/, '');
  return stem !== param && model.refTarget(resource, stem) ? stem : undefined;
};

/** The key fields of `resource` an item path names itself: those its parents do not give. */
export const itemKeyFields = (model: KeyModel, resource: string, parentFields: readonly string[]): string[] => {
  const key = model.keyOf(resource);
  return key.length === 0 ? ['id'] : key.filter((k) => !parentFields.includes(k));
};

/**
 * Binds a path's parameters, left to right: a parameter named after a ref field closes a group that names that
 * parent by its key (`/repos/{owner}/{repo}/issues`: {owner} and {repo} name the Repo by [owner, name]); on an item
 * route the parameters left over at the end name the record by its key fields (or its id). `unbound` lists the
 * parameters that bind nothing.
 */
export const bindPath = (
  model: KeyModel,
  resource: string,
  path: string,
  item: boolean,
): PathBinding & { readonly unbound: readonly string[] } => {
  const pending: string[] = [];
  const parents: Array<{ params: string[]; field: string }> = [];
  for (const param of paramsOf(path)) {
    const field = refParam(model, resource, param);
    const target = field ? model.refTarget(resource, field) : undefined;
    const arity = target ? keyArity(model, target) : 0;
    if (field && target && pending.length >= arity - 1 && !parents.some((p) => p.field === field)) {
      parents.push({ params: [...pending.splice(pending.length - (arity - 1)), param], field });
    } else pending.push(param);
  }
  if (!item) return { parents, item: [], unbound: pending };
  const fields = itemKeyFields(
    model,
    resource,
    parents.map((p) => p.field),
  );
  const need = fields.reduce((n, f) => {
    const target = f === 'id' ? undefined : model.refTarget(resource, f);
    return n + (target ? keyArity(model, target) : 1);
  }, 0);
  if (pending.length < need) return { parents, item: [], unbound: pending };
  const named = pending.splice(pending.length - need);
  return { parents, item: named, unbound: pending };
};
