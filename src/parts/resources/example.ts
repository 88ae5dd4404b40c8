import type { ComputedFieldPlan, ResourcePlan } from '../../plan/types.ts';
import { createWireRecord, toWire } from '../endpoints/wire-names.ts';
import type { FieldSpec } from './field-schema.ts';
import { createNormalizer } from './normalize.ts';
import { patternExample } from './pattern-example.ts';
import { derivedBase } from './slug.ts';

/** A fixed, valid-looking ULID so examples are stable from one build to the next. */
const EXAMPLE_ULID = '01JD7X3K9Q2M4N6P8R0S2T4V6W';
const EXAMPLE_TIME = '2026-01-15T09:30:00.000Z';

const EXAMPLE_UUIDV7 = '01938f3a-5c2e-7b4d-8e6f-1a2b3c4d5e6f';

/** An id this resource could have issued: prefix_ULID, 1, or a UUIDv7. */
export const exampleId = (
  resource: (Pick<ResourcePlan, 'idPrefix'> & Partial<Pick<ResourcePlan, 'idStyle'>>) | undefined,
): string | number => {
  if (resource?.idStyle === 'integer') return 1;
  if (resource?.idStyle === 'uuidv7') return EXAMPLE_UUIDV7;
  return resource?.idPrefix ? `${resource.idPrefix}_${EXAMPLE_ULID}` : EXAMPLE_ULID;
};

const PATTERN_CANDIDATES = ['ABC-123', '+44 20 7946 0958', 'example', 'abc123', '12345', 'A1'];

const exampleString = (f: FieldSpec, name: string): string => {
  switch (f.format) {
    case 'email':
      return 'jane@example.com';
    case 'uri':
      return 'https://example.com/hooks/ninefold';
    case 'uuid':
      return '3f2a9c1e-5b7d-4e8f-9a0b-1c2d3e4f5a6b';
    case 'hostname':
      return 'api.example.com';
    case 'ipv4':
      return '192.0.2.10';
    case 'ipv6':
      return '2001:db8::10';
  }
  if (f.pattern) {
    const re = new RegExp(f.pattern);
    const hit = PATTERN_CANDIDATES.find((c) => re.test(c)) ?? patternExample(f.pattern);
    if (hit !== undefined) return hit;
  }
  const words = name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
  let text = `Example ${words}`;
  if (f.maxLength !== undefined) text = text.slice(0, f.maxLength);
  if (f.minLength !== undefined && text.length < f.minLength) text = text.padEnd(f.minLength, 'x');
  return text;
};

const exampleNumber = (f: FieldSpec, integer: boolean): number => {
  const min = f.min ?? (integer ? 1 : 0);
  const max = f.max ?? Math.max(min, 100);
  const value = Math.min(Math.max(integer ? 1 : 9.5, min), max);
  return integer ? Math.ceil(value) : value;
};

/**
 * A realistic value for a field: its `example`, else its default, else the first enum value, else one
 * built from its type, format and bounds. `resources` resolves a ref to an id of its target.
 */
export const exampleValue = (
  f: FieldSpec,
  name: string,
  mode: 'input' | 'output',
  resources?: ReadonlyMap<string, ResourcePlan>,
): unknown => {
  if (f.example !== undefined) return f.example;
  // An empty default list shows nothing of the items' shape: build one item instead.
  const emptyList = Array.isArray(f.default) && f.default.length === 0 && f.items !== undefined;
  if (f.default !== undefined && !emptyList) return f.default;
  switch (f.type) {
    case 'string':
      return exampleString(f, name);
    case 'integer':
      return exampleNumber(f, true);
    case 'number':
      return exampleNumber(f, false);
    case 'decimal': {
      const scale = f.scale ?? 2;
      return scale === 0 ? '20' : `19.${'99'.padEnd(scale, '0').slice(0, scale)}`;
    }
    case 'boolean':
      return false;
    case 'date':
      return EXAMPLE_TIME.slice(0, 10);
    case 'datetime':
      return EXAMPLE_TIME;
    case 'enum':
      return f.values?.[0] ?? '';
    case 'ref':
      return exampleId(f.to ? resources?.get(f.to) : undefined);
    case 'json':
      return { key: 'value' };
    case 'array': {
      if (!f.items) return [];
      const count = Math.max(1, f.minItems ?? 1);
      return Array.from({ length: count }, () => exampleValue(f.items as FieldSpec, name, mode, resources));
    }
    case 'object':
      return exampleObject(f.fields ?? {}, mode, resources);
  }
};

/** An example object of fields: what a client would send (input) or receive (output). */
export const exampleObject = (
  fields: Readonly<Record<string, FieldSpec>>,
  mode: 'input' | 'output',
  resources?: ReadonlyMap<string, ResourcePlan>,
): Record<string, unknown> => {
  const out: Record<string, unknown> = {};
  for (const [name, f] of Object.entries(fields)) {
    if ((mode === 'input' && f.readOnly) || (mode === 'output' && f.writeOnly)) continue;
    // Output shows what a record holds: optional read-only fields without a value are left out, as the runtime does.
    if (mode === 'output' && f.readOnly && !f.required && f.default === undefined && f.example === undefined) continue;
    out[name] = exampleValue(f, name, mode, resources);
  }
  return out;
};

/** A computed field's example value: what an anonymous caller sees of a record nobody has touched. */
export const exampleComputed = (c: ComputedFieldPlan): boolean | number => (c.type === 'boolean' ? false : 0);

/** A record as the service returns it (in its wire's names, with its `object` member). */
export const exampleRecord = (
  resource: ResourcePlan,
  resources: ReadonlyMap<string, ResourcePlan>,
): Record<string, unknown> => createWireRecord(resource)(exampleStored(resource, resources));

/** A record as the service holds it, in the spec's names, with its computed fields as an anonymous caller sees them. */
export const exampleStored = (
  resource: ResourcePlan,
  resources: ReadonlyMap<string, ResourcePlan>,
): Record<string, unknown> => {
  const out: Record<string, unknown> = { id: exampleId(resource) };
  for (const f of resource.fields) {
    if (f.writeOnly) continue;
    if (f.isState && resource.states) out[f.name] = resource.states.initial;
    else if (f.derive)
      out[f.name] = null; // set below, from the values around it; here for the key order
    else if (!f.readOnly || f.required || f.hasDefault || f.spec.example !== undefined)
      out[f.name] = exampleValue(f.spec, f.name, 'output', resources);
  }
  // Stored values as the service stores them: normalised, and derived fields set from the example's source.
  const normalizer = createNormalizer(resource);
  const stored = normalizer.input(out) as Record<string, unknown>;
  normalizer.arrays(stored);
  for (const f of resource.fields) {
    if (f.derive && !f.writeOnly && f.spec.example === undefined)
      stored[f.name] = derivedBase(resource, f.derive, stored);
  }
  for (const c of resource.computed) stored[c.name] = exampleComputed(c);
  return { ...stored, createdAt: EXAMPLE_TIME, updatedAt: EXAMPLE_TIME };
};

/** A create (or PUT) body: every writable field, except parent references given by the path. */
export const exampleCreate = (
  resource: ResourcePlan,
  resources: ReadonlyMap<string, ResourcePlan>,
): Record<string, unknown> => {
  const fromPath = new Set(resource.parentParams.map((p) => p.field));
  const out: Record<string, unknown> = {};
  for (const f of resource.fields) {
    if (f.readOnly || fromPath.has(f.name)) continue;
    out[f.name] = exampleValue(f.spec, f.name, 'input', resources);
  }
  return toWire(out, resource.wire.names) as Record<string, unknown>;
};

/** A merge patch: the first writable field that is not a reference, changed. */
export const examplePatch = (
  resource: ResourcePlan,
  resources: ReadonlyMap<string, ResourcePlan>,
): Record<string, unknown> => {
  const f =
    resource.fields.find((x) => !x.readOnly && !x.ref && x.type !== 'array') ??
    resource.fields.find((x) => !x.readOnly);
  const patch = f ? { [f.name]: exampleValue(f.spec, f.name, 'input', resources) } : {};
  return toWire(patch, resource.wire.names) as Record<string, unknown>;
};
