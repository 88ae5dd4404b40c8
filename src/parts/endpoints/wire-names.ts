import type { FieldPlan, ResourcePlan, WireNames } from '../../plan/types.ts';
import { ApiError } from '../errors/api-error.ts';
import type { FieldSpec } from '../resources/field-schema.ts';
import { snakeCase } from '../resources/naming.ts';

export type Naming = 'camelCase' | 'snake_case';

/** A field's name on the wire: the engine's own (camelCase), or snake_case (`unitPrice` → `unit_price`). */
export const wireName = (naming: Naming, name: string): string => (naming === 'snake_case' ? snakeCase(name) : name);

export const NO_NAMES: WireNames = { out: new Map(), in: new Map() };

const SYSTEM_NAMES = ['id', 'createdAt', 'updatedAt'];

const innerFields = (spec: FieldSpec | undefined): Readonly<Record<string, FieldSpec>> | undefined => {
  if (!spec) return undefined;
  if (spec.type === 'object') return spec.fields;
  return spec.type === 'array' ? innerFields(spec.items) : undefined;
};

const level = (naming: Naming, entries: ReadonlyArray<readonly [string, FieldSpec | undefined]>): WireNames => {
  const out = new Map<string, { name: string; inner?: WireNames }>();
  const back = new Map<string, { name: string; inner?: WireNames }>();
  for (const [name, spec] of entries) {
    const wire = wireName(naming, name);
    const fields = innerFields(spec);
    const inner = fields ? level(naming, Object.entries(fields)) : undefined;
    const keep = inner && inner.out.size > 0 ? inner : undefined;
    if (wire === name && !keep) continue;
    out.set(name, { name: wire, ...(keep ? { inner: keep } : {}) });
    back.set(wire, { name, ...(keep ? { inner: keep } : {}) });
  }
  return { out, in: back };
};

/** The renamed fields of a record (system fields included), nested objects and arrays of objects too. */
export const recordNames = (
  naming: Naming,
  fields: readonly FieldPlan[],
  /** Names shown with the record that are not stored fields: computed fields, the resource's and its views'. */
  computed: readonly string[] = [],
): WireNames =>
  naming === 'camelCase'
    ? NO_NAMES
    : level(naming, [
        ...SYSTEM_NAMES.map((n) => [n, undefined] as const),
        ...fields.map((f) => [f.name, f.spec] as const),
        ...computed.map((n) => [n, undefined] as const),
      ]);

/** The names of an object of fields (a transition's input, say). */
export const objectNames = (naming: Naming, fields: Readonly<Record<string, FieldSpec>>): WireNames =>
  naming === 'camelCase' ? NO_NAMES : level(naming, Object.entries(fields));

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A value in engine names, as the wire shows it. Keys nobody renamed keep their order and their value. */
export const toWire = (value: unknown, names: WireNames): unknown => {
  if (names.out.size === 0) return value;
  if (Array.isArray(value)) return value.map((item) => toWire(item, names));
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    const entry = names.out.get(key);
    if (!entry) out[key] = v;
    else out[entry.name] = entry.inner ? toWire(v, entry.inner) : v;
  }
  return out;
};

const escapeKey = (key: string) => key.replaceAll('~', '~0').replaceAll('/', '~1');

/**
 * A body in wire names, in engine names. A key that is an engine name the wire spells otherwise (`firstName` when
 * the wire says `first_name`) is not a field on this wire: refused as unknown, under the name the client sent.
 */
export const fromWire = (value: unknown, names: WireNames, path = ''): unknown => {
  if (names.out.size === 0) return value;
  if (Array.isArray(value)) return value.map((item, i) => fromWire(item, names, `${path}/${i}`));
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    const entry = names.in.get(key);
    if (entry) out[entry.name] = entry.inner ? fromWire(v, entry.inner, `${path}/${escapeKey(key)}`) : v;
    else if (names.out.has(key) && !names.in.has(key))
      throw new ApiError('validation_failed', 'The body has a key that is not a field of this resource.', [
        {
          pointer: `#${path}/${escapeKey(key)}`,
          code: 'unknown_field',
          message: `${key.slice(0, 64)} is not a field of this resource`,
        },
      ]);
    else out[key] = v;
  }
  return out;
};

/** `#/lines/0/unitPrice` → `#/lines/0/unit_price`: each segment renamed at its level, indexes kept. */
export const createPointerNamer =
  (names: WireNames) =>
  (pointer: string): string => {
    if (names.out.size === 0) return pointer;
    const hash = pointer.startsWith('#') ? '#' : '';
    const segments = pointer.slice(hash.length).split('/');
    let at: WireNames | undefined = names;
    const renamed = segments.map((segment, i) => {
      if (i === 0 || !at || /^\d+$/.test(segment)) return segment;
      const entry: { name: string; inner?: WireNames } | undefined = at.out.get(segment);
      at = entry?.inner;
      return entry ? escapeKey(entry.name) : segment;
    });
    return `${hash}${renamed.join('/')}`;
  };

/** Every engine name a tree renames, at any depth (to rename the names that messages quote). */
export const flatNames = (names: WireNames, into = new Map<string, string>()): Map<string, string> => {
  for (const [name, entry] of names.out) {
    into.set(name, entry.name);
    if (entry.inner) flatNames(entry.inner, into);
  }
  return into;
};

export type WireRecord = (record: Record<string, unknown>) => Record<string, unknown>;

/** A record as the engine writes it, as this resource's wire shows it: renamed fields, then `object` after the id. */
export const createWireRecord = (resource: ResourcePlan): WireRecord => {
  const { names } = resource.wire;
  const object = resource.object;
  if (object === undefined) return (record) => toWire(record, names) as Record<string, unknown>;
  return (record) => {
    const { id, ...rest } = toWire(record, names) as Record<string, unknown>;
    return { id, object, ...rest };
  };
};

/** A map of fields keyed as the wire names them, nested objects (and arrays of them) too: for documents. */
export const wireFields = (
  fields: Readonly<Record<string, FieldSpec>>,
  names: WireNames,
): Record<string, FieldSpec> => {
  if (names.out.size === 0) return { ...fields };
  const rename = (spec: FieldSpec, inner: WireNames | undefined): FieldSpec => {
    if (!inner) return spec;
    if (spec.type === 'object' && spec.fields) return { ...spec, fields: wireFields(spec.fields, inner) };
    if (spec.type === 'array' && spec.items) return { ...spec, items: rename(spec.items, inner) };
    return spec;
  };
  return Object.fromEntries(
    Object.entries(fields).map(([name, spec]) => {
      const entry = names.out.get(name);
      return [entry?.name ?? name, rename(spec, entry?.inner)];
    }),
  );
};
