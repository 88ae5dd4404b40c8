import type { ServiceSpec } from '../../spec/schema.ts';
import type { FieldSpec } from '../resources/field-schema.ts';
import type { ChangeSchema } from './schema.ts';

type Change = (typeof ChangeSchema)['static'];
type Rec = Record<string, unknown>;
const isRec = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Renames one key, keeping its place among the others. */
const renameKey = (record: Rec, from: string, to: string): Rec =>
  Object.fromEntries(Object.entries(record).map(([k, v]) => [k === from ? to : k, v]));

/**
 * Rewrites a field name wherever a resource's spec names it besides its own `fields`: list filters, sorts and
 * expands, editable fields, views, unique keys and indexes (string arrays), and `record.<name>` in its CEL rules.
 */
const rewriteNames = (spec: Rec, resource: string, rewrite: (name: string) => string | undefined) => {
  const words = (v: unknown, key?: string): unknown => {
    if (Array.isArray(v)) return v.flatMap((x) => (typeof x === 'string' ? (rewrite(x) ?? []) : [words(x)]));
    if (!isRec(v)) return v;
    return Object.fromEntries(
      Object.entries(v).map(([k, x]) => [k, key === 'resource' && k === 'fields' && isRec(x) ? x : words(x)]),
    );
  };
  const cel = (v: unknown): unknown =>
    typeof v === 'string'
      ? v.replace(/\brecord\.([A-Za-z_][A-Za-z0-9_]*)\b/g, (m, name: string) => {
          const now = rewrite(name);
          return now === undefined ? m : `record.${now}`;
        })
      : isRec(v)
        ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, cel(x)]))
        : v;
  const resources = spec.resources as Rec;
  resources[resource] = words(resources[resource], 'resource');
  const endpoints = spec.endpoints as Rec | undefined;
  if (endpoints && isRec(endpoints[resource])) endpoints[resource] = words(endpoints[resource]);
  const rules = isRec(spec.auth) && isRec(spec.auth.rules) ? spec.auth.rules : undefined;
  if (rules && rules[resource] !== undefined) rules[resource] = cel(rules[resource]);
};

/** The field a removed field is shown as in older versions: the type of its default, else any JSON value. */
const removedField = (shown: unknown): FieldSpec => {
  const type =
    typeof shown === 'string'
      ? 'string'
      : typeof shown === 'boolean'
        ? 'boolean'
        : Number.isInteger(shown)
          ? 'integer'
          : typeof shown === 'number'
            ? 'number'
            : 'json';
  return { type, ...(shown === undefined ? {} : { default: shown }), description: 'Removed in a later version.' };
};

/** Undoes one change on a spec: the resource as it was before the version that made it. */
const undo = (spec: Rec, change: Change) => {
  const resources = spec.resources as Rec | undefined;
  const resource = resources?.[change.resource];
  if (!isRec(resource) || !isRec(resource.fields)) return;
  let fields = resource.fields;
  if (change.rename) {
    const { from, to } = change.rename;
    fields = renameKey(fields, to, from);
    resource.fields = fields;
    rewriteNames(spec, change.resource, (name) => (name === to ? from : name));
  }
  if (change.add) {
    const added = change.add;
    const { [added]: _, ...rest } = fields;
    resource.fields = rest;
    rewriteNames(spec, change.resource, (name) => (name === added ? undefined : name));
  }
  if (change.remove) resource.fields = { ...(resource.fields as Rec), [change.remove]: removedField(change.default) };
  if (change.retype) {
    const current = isRec(fields[change.retype.field]) ? (fields[change.retype.field] as Rec) : {};
    const was: Rec = { ...change.retype.from };
    if (current.required !== undefined && was.required === undefined) was.required = current.required;
    resource.fields = { ...(resource.fields as Rec), [change.retype.field]: was };
  }
};

/**
 * The spec as a caller of an older version sees it: every later version's changes undone, newest first — the same
 * replay `check` walks and the runtime's shifts apply to each record. The newest (or an unknown) version: the spec.
 */
export const specAtVersion = (spec: ServiceSpec, id: string): ServiceSpec => {
  const versions = spec.versioning?.versions ?? [];
  const index = versions.findIndex((v) => v.id === id);
  if (index < 0 || index === versions.length - 1) return spec;
  const out = structuredClone(spec) as unknown as Rec;
  for (let v = versions.length - 1; v > index; v--)
    for (const change of [...(versions[v]?.changes ?? [])].reverse()) undo(out, change);
  return out as unknown as ServiceSpec;
};
