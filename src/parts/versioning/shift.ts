import type { ResourcePlan } from '../../plan/types.ts';
import { unknownKeyError } from '../../runtime/body-shape.ts';
import { wireName } from '../endpoints/wire-names.ts';
import { ApiError, type FieldError } from '../errors/api-error.ts';
import type { ChangeSchema } from './schema.ts';
import type { TransformModules } from './transform.ts';

type Change = (typeof ChangeSchema)['static'];
type Rec = Record<string, unknown>;
/** The write a body is shifted for: a field made required is filled in only where the whole record is sent. */
export type WriteAction = 'create' | 'update' | 'replace';

/**
 * How one resource's records differ between an older version and the newest, compiled from the changes of every
 * later version. Names are wire names; bodies and records may sit in the resource's envelope.
 */
export interface RecordShift {
  /** A body written in the older version, as the newest version takes it; a field the older one lacks is 422. */
  up(body: unknown, action?: WriteAction): unknown;
  /** A record of the newest version as the older version shows it. */
  down(record: Rec): Rec;
  /** A field name of the older version (a filter, sort or expand) as the newest names it. */
  field(name: string): string;
  /** A field name of the newest version as the older version names it. */
  old(name: string): string;
  /** An error pointer of the newest version as the older version names it. */
  pointer(pointer: string): string;
  /** Field names quoted in a message, as the older version names them. */
  message(text: string): string;
  /** Enum values added after the older version, by the newest name of their field: a filter there may not name them. */
  readonly newValues: ReadonlyMap<string, ReadonlySet<string>>;
}

const isRec = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A value of one field type as another, when it has an exact spelling there; anything else passes unchanged. */
export const convertValue = (value: unknown, to: string): unknown => {
  if (value === null || value === undefined) return value;
  switch (to) {
    case 'string':
    case 'decimal':
      return typeof value === 'number' || typeof value === 'boolean' ? String(value) : value;
    case 'integer':
    case 'number':
      return typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)) ? Number(value) : value;
    case 'boolean':
      return value === 'true' ? true : value === 'false' ? false : value;
    default:
      return value;
  }
};

/** Renames one key, keeping its place among the others. */
const renameKey = (record: Rec, from: string, to: string): Rec => {
  if (!(from in record)) return record;
  const out: Rec = {};
  for (const [k, v] of Object.entries(record)) out[k === from ? to : k] = v;
  return out;
};

/** What a step found wrong with a body of the older version: fields it lacks, values it cannot send. */
interface Refusals {
  readonly unknown: string[];
  readonly invalid: FieldError[];
}

interface Step {
  up(body: Rec, refusals: Refusals, action: WriteAction): Rec;
  down(record: Rec): Rec;
}

const without = (record: Rec, key: string): Rec => {
  if (!(key in record)) return record;
  const { [key]: _, ...rest } = record;
  return rest;
};

/** `object.field`, moved out to the top level of older records and back in. */
const moveStep = (from: string, parent: string, child: string): Step => ({
  up: (body) => {
    if (!(from in body)) return body;
    const inner = isRec(body[parent]) ? (body[parent] as Rec) : {};
    return { ...without(body, from), [parent]: { ...inner, [child]: body[from] } };
  },
  down: (record) => {
    const inner = record[parent];
    if (!isRec(inner) || !(child in inner)) return record;
    const rest = without(inner, child);
    const out = renameKey(record, parent, from);
    out[from] = inner[child];
    if (Object.keys(rest).length) out[parent] = rest;
    return out;
  },
});

interface StepContext {
  readonly resource: string;
  readonly name: (field: string) => string;
  readonly types: (field: string) => string;
  readonly transforms: TransformModules;
  readonly at: string;
}

const stepOf = (change: Change, c: StepContext): Step[] => {
  const { name, types } = c;
  const steps: Step[] = [];
  if (change.rename) {
    const from = name(change.rename.from);
    const to = name(change.rename.to);
    steps.push({
      up: (body, { unknown }) => {
        if (to in body) unknown.push(to);
        return renameKey(body, from, to);
      },
      down: (record) => renameKey(record, to, from),
    });
  }
  if (change.add) {
    const added = name(change.add);
    steps.push({
      up: (body, { unknown }) => {
        if (added in body) unknown.push(added);
        return body;
      },
      down: (record) => {
        if (!(added in record)) return record;
        const { [added]: _, ...rest } = record;
        return rest;
      },
    });
  }
  if (change.remove) {
    const removed = name(change.remove);
    const shown = change.default;
    steps.push({
      up: (body) => {
        if (!(removed in body)) return body;
        const { [removed]: _, ...rest } = body;
        return rest;
      },
      down: (record) => (shown === undefined ? record : { ...record, [removed]: shown }),
    });
  }
  if (change.retype) {
    const field = name(change.retype.field);
    const now = types(change.retype.field);
    const was = change.retype.from.type;
    steps.push({
      up: (body) => (field in body ? { ...body, [field]: convertValue(body[field], now) } : body),
      down: (record) => (field in record ? { ...record, [field]: convertValue(record[field], was) } : record),
    });
  }
  if (change.require) {
    const field = name(change.require);
    const given = change.default;
    steps.push({
      up: (body, _, action) =>
        action === 'update' || field in body || given === undefined ? body : { ...body, [field]: given },
      down: (record) => record,
    });
  }
  const enumAdd = change['enum-add'];
  if (enumAdd) {
    const field = name(enumAdd.field);
    const added = new Set(enumAdd.values);
    steps.push({
      up: (body, { invalid }) => {
        const value = body[field];
        if (typeof value === 'string' && added.has(value))
          invalid.push({
            pointer: `#${c.at}/${field}`,
            code: 'invalid_enum',
            message: `"${value.slice(0, 64)}" is not a value of this API version`,
          });
        return body;
      },
      down: (record) =>
        typeof record[field] === 'string' && added.has(record[field] as string)
          ? { ...record, [field]: enumAdd.fallback }
          : record,
    });
  }
  if (change.move) {
    const [parent = '', child = ''] = change.move.to.split('.');
    steps.push(moveStep(name(change.move.from), name(parent), child));
  }
  if (change.transform) {
    const module = change.transform;
    const { resource } = c;
    steps.push({
      up: (body, _, action) => {
        const fn = c.transforms.get(module)?.request;
        return fn ? asRecord(fn(body, { resource, action }), body) : body;
      },
      down: (record) => {
        const fn = c.transforms.get(module)?.answer;
        return fn ? asRecord(fn(record, { resource }), record) : record;
      },
    });
  }
  return steps;
};

/** What a transform returned: a record, or the one it was given when it changed that in place. */
const asRecord = (value: unknown, given: Rec): Rec => (isRec(value) ? value : given);

/** Compiles a resource's changes (oldest first) into the shift between their first version's predecessor and now. */
export const compileShift = (
  resource: ResourcePlan,
  changes: readonly Change[],
  transforms: TransformModules = new Map(),
): RecordShift => {
  const { wire } = resource;
  const envelope = wire.envelope;
  const name = (field: string) => wire.names.out.get(field)?.name ?? wireName(wire.naming, field);
  const types = (field: string) => resource.fields.find((f) => f.name === field)?.type ?? 'string';
  const context = { resource: resource.name, name, types, transforms, at: envelope ? `/${envelope}` : '' };
  const steps = changes.flatMap((c) => stepOf(c, context));
  // Old name → new name, in order: a rename, or a field moved into an object (`street` → `address.street`).
  const renames = changes.flatMap((c) =>
    c.rename
      ? [[name(c.rename.from), name(c.rename.to)] as const]
      : c.move
        ? [[name(c.move.from), movedName(c.move.to, name)] as const]
        : [],
  );
  const inside = (value: unknown, fn: (r: Rec) => Rec): unknown => {
    if (!envelope) return isRec(value) ? fn(value) : value;
    if (!isRec(value) || !isRec(value[envelope])) return value;
    return { ...value, [envelope]: fn(value[envelope] as Rec) };
  };
  const field = (old: string) => renames.reduce((n, [from, to]) => (n === from ? to : n), old);
  const backwards = (current: string) => renames.reduceRight((n, [from, to]) => (n === to ? from : n), current);
  const words = renames.some(([, to]) => !to.includes('.'))
    ? new RegExp(
        `\\b(${[...new Set(renames.flatMap(([, to]) => (to.includes('.') ? [] : [to])))].sort((a, b) => b.length - a.length).join('|')})\\b`,
        'g',
      )
    : undefined;
  const at = envelope ? 2 : 1;
  // Each enum-add's field, carried forward through the renames declared after it.
  const newValues = new Map<string, Set<string>>();
  for (const [k, c] of changes.entries()) {
    const e = c['enum-add'];
    if (!e) continue;
    const newest = changes
      .slice(k + 1)
      .reduce((n, later) => (later.rename && name(later.rename.from) === n ? name(later.rename.to) : n), name(e.field));
    newValues.set(newest, new Set([...(newValues.get(newest) ?? []), ...e.values]));
  }
  return {
    newValues,
    up: (body, action = 'create') =>
      inside(body, (record) => {
        const refusals: Refusals = { unknown: [], invalid: [] };
        const out = steps.reduce((r, s) => s.up(r, refusals, action), record);
        const { unknown, invalid } = refusals;
        if (unknown.length) {
          const errors: FieldError[] = unknown.map((k) => unknownKeyError(envelope ? `/${envelope}` : '', k));
          throw new ApiError('unknown_field', `Unknown field(s) in this API version: ${unknown.join(', ')}.`, errors);
        }
        if (invalid.length)
          throw new ApiError('validation_failed', `${invalid.length} field(s) failed validation.`, invalid);
        return out;
      }),
    down: (record) => steps.reduceRight((r, s) => s.down(r), record),
    field,
    old: backwards,
    pointer: (pointer) => {
      const parts = pointer.split('/');
      const segment = parts[at];
      if (segment === undefined) return pointer;
      // A moved field: `/address/street` of the newest is `/street` of the older version.
      const nested = parts[at + 1] === undefined ? undefined : backwards(`${segment}.${parts[at + 1]}`);
      if (nested !== undefined && !nested.includes('.')) parts.splice(at, 2, nested);
      else parts[at] = backwards(segment);
      return parts.join('/');
    },
    message: (text) => (words ? text.replace(words, (w) => backwards(w)) : text),
  };
};

/** The newest name of a moved field, `object.field`, in wire names. */
const movedName = (to: string, name: (field: string) => string): string => {
  const [parent = '', child = ''] = to.split('.');
  return `${name(parent)}.${child}`;
};
