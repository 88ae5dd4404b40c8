import type { ServiceSpec } from '../../spec/schema.ts';
import { OPERATIONS } from '../endpoints/operations.ts';
import { DEFAULT_OPERATIONS } from '../endpoints/plan.ts';
import type { FieldSpec } from '../resources/field-schema.ts';
import { findOperation } from './operation-name.ts';
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

const recAt = (parent: Rec, key: string): Rec => {
  if (!isRec(parent[key])) parent[key] = {};
  return parent[key] as Rec;
};

/** Takes an operation, transition, custom endpoint or event type out of a spec (for a version that lacks it). */
const drop = (
  spec: Rec,
  change: Change,
  operation: string | undefined,
  transition: string | undefined,
  event?: string,
) => {
  const resources = isRec(spec.resources) ? spec.resources : {};
  const dropTransition = (resource: string, name: string) => {
    const states = isRec(resources[resource]) ? (resources[resource] as Rec).states : undefined;
    if (isRec(states) && isRec(states.transitions)) {
      const { [name]: _, ...rest } = states.transitions;
      states.transitions = rest;
    }
    const rules = isRec(spec.auth) && isRec(spec.auth.rules) ? spec.auth.rules[resource] : undefined;
    if (isRec(rules) && isRec(rules.transitions)) {
      const { [name]: _, ...rest } = rules.transitions;
      rules.transitions = rest;
    }
  };
  if (transition && change.resource) dropTransition(change.resource, transition);
  const found = operation ? findOperation(spec as unknown as ServiceSpec, operation) : undefined;
  if (found?.kind === 'transition') dropTransition(found.resource, found.name);
  if (found?.kind === 'operation' && (OPERATIONS as readonly string[]).includes(found.name)) {
    const entry = recAt(recAt(spec, 'endpoints'), found.resource);
    const listed = Array.isArray(entry.operations) ? (entry.operations as string[]) : [...DEFAULT_OPERATIONS];
    entry.operations = listed.filter((o) => o !== found.name);
  }
  if (found?.kind === 'custom' && isRec(spec.endpoints) && Array.isArray(spec.endpoints.custom))
    spec.endpoints.custom = spec.endpoints.custom.filter((c) => !isRec(c) || c.name !== found.name);
  const declared = isRec(spec.events) && isRec(spec.events.declared) ? spec.events.declared : undefined;
  if (event && declared && event in declared) {
    const { [event]: _, ...rest } = declared;
    (spec.events as Rec).declared = rest;
  }
};

/** An error change undone: the old code in the catalogue and in the lists of endpoints, with its old status. */
const undoError = (spec: Rec, error: NonNullable<Change['error']>) => {
  const old = error.was.code ?? error.code;
  const errors = recAt(spec, 'errors');
  const catalogue = isRec(errors.catalogue) ? errors.catalogue : undefined;
  const own = catalogue?.[error.code];
  if (catalogue && isRec(own)) {
    const { [error.code]: _, ...rest } = catalogue;
    errors.catalogue = { ...rest, [old]: { ...own, ...(error.was.status ? { status: error.was.status } : {}) } };
  } else if (error.was.status && old === error.code) {
    // A built-in code with another status then (a renamed one is catalogued from the change itself: errors/plan.ts).
    const remap = recAt(errors, 'remap');
    remap[old] = { ...(isRec(remap[old]) ? remap[old] : {}), status: error.was.status };
  }
  const custom = isRec(spec.endpoints) && Array.isArray(spec.endpoints.custom) ? spec.endpoints.custom : [];
  for (const c of custom)
    if (isRec(c) && Array.isArray(c.errors)) c.errors = c.errors.map((e) => (e === error.code ? old : e));
};

/** A field moved into an object (`address.street`), put back at the top level as `from`. */
const undoMove = (spec: Rec, resource: string, record: Rec, move: NonNullable<Change['move']>) => {
  const fields = record.fields as Rec;
  const [parent = '', child = ''] = move.to.split('.');
  const holder = isRec(fields[parent]) ? { ...(fields[parent] as Rec) } : undefined;
  const inner = holder && isRec(holder.fields) ? (holder.fields as Rec) : {};
  const moved = inner[child];
  if (!holder || moved === undefined) return;
  const { [child]: _, ...rest } = inner;
  const out: Rec = { ...fields, [move.from]: moved };
  if (Object.keys(rest).length) out[parent] = { ...holder, fields: rest };
  else delete out[parent];
  record.fields = out;
  rewriteNames(spec, resource, (name) =>
    name === move.to ? move.from : name === parent && !out[parent] ? undefined : name,
  );
};

/** Undoes one change on a spec: the resource as it was before the version that made it. */
const undo = (spec: Rec, change: Change) => {
  drop(spec, change, change['add-operation'], change['add-transition'], change['add-event']);
  if (change.error) undoError(spec, change.error);
  const resources = spec.resources as Rec | undefined;
  const resource = change.resource ? resources?.[change.resource] : undefined;
  if (!change.resource || !isRec(resource) || !isRec(resource.fields)) return;
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
  const now = resource.fields as Rec;
  // Without a default, older requests must send the field too: it stays required there.
  if (change.require && change.default !== undefined && isRec(now[change.require])) {
    const { required: _, ...field } = now[change.require] as Rec;
    resource.fields = { ...now, [change.require]: { ...field, default: change.default } };
  }
  const enumAdd = change['enum-add'];
  if (enumAdd && isRec(now[enumAdd.field])) {
    const field = now[enumAdd.field] as Rec;
    const values = Array.isArray(field.values) ? field.values.filter((x) => !enumAdd.values.includes(String(x))) : [];
    const shown = enumAdd.values.includes(String(field.default)) ? { default: enumAdd.fallback } : {};
    resource.fields = { ...(resource.fields as Rec), [enumAdd.field]: { ...field, values, ...shown } };
  }
  if (change.move) undoMove(spec, change.resource, resource, change.move);
};

/**
 * The spec as a caller of an older version sees it: every later version's changes undone, newest first — the same
 * replay `check` walks and the runtime's shifts apply to each record. The newest (or an unknown) version: the spec.
 */
export const specAtVersion = (spec: ServiceSpec, id: string): ServiceSpec => {
  const versions = spec.versioning?.versions ?? [];
  const index = versions.findIndex((v) => v.id === id);
  // What was removed in this version or before: the engine keeps it for older versions, this one lacks it.
  const removals = versions
    .slice(0, index + 1)
    .flatMap((v) =>
      (v.changes ?? []).filter((c) => c['remove-operation'] || c['remove-transition'] || c['remove-event']),
    );
  if (index < 0 || (index === versions.length - 1 && removals.length === 0)) return spec;
  const out = structuredClone(spec) as unknown as Rec;
  for (let v = versions.length - 1; v > index; v--)
    for (const change of [...(versions[v]?.changes ?? [])].reverse()) undo(out, change);
  for (const c of removals) drop(out, c, c['remove-operation'], c['remove-transition'], c['remove-event']);
  return out as unknown as ServiceSpec;
};
