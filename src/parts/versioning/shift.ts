import type { ResourcePlan } from '../../plan/types.ts';
import { unknownKeyError } from '../../runtime/body-shape.ts';
import { wireName } from '../endpoints/wire-names.ts';
import { ApiError, type FieldError } from '../errors/api-error.ts';
import type { ChangeSchema } from './schema.ts';

type Change = (typeof ChangeSchema)['static'];
type Rec = Record<string, unknown>;

/**
 * How one resource's records differ between an older version and the newest, compiled from the changes of every
 * later version. Names are wire names; bodies and records may sit in the resource's envelope.
 */
export interface RecordShift {
  /** A body written in the older version, as the newest version takes it; a field the older one lacks is 422. */
  up(body: unknown): unknown;
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

interface Step {
  up(body: Rec, unknown: string[]): Rec;
  down(record: Rec): Rec;
}

const stepOf = (change: Change, name: (field: string) => string, types: (field: string) => string): Step[] => {
  const steps: Step[] = [];
  if (change.rename) {
    const from = name(change.rename.from);
    const to = name(change.rename.to);
    steps.push({
      up: (body, unknown) => {
        if (to in body) unknown.push(to);
        return renameKey(body, from, to);
      },
      down: (record) => renameKey(record, to, from),
    });
  }
  if (change.add) {
    const added = name(change.add);
    steps.push({
      up: (body, unknown) => {
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
  return steps;
};

/** Compiles a resource's changes (oldest first) into the shift between their first version's predecessor and now. */
export const compileShift = (resource: ResourcePlan, changes: readonly Change[]): RecordShift => {
  const { wire } = resource;
  const name = (field: string) => wire.names.out.get(field)?.name ?? wireName(wire.naming, field);
  const types = (field: string) => resource.fields.find((f) => f.name === field)?.type ?? 'string';
  const steps = changes.flatMap((c) => stepOf(c, name, types));
  const renames = changes.flatMap((c) => (c.rename ? [[name(c.rename.from), name(c.rename.to)] as const] : []));
  const envelope = wire.envelope;
  const inside = (value: unknown, fn: (r: Rec) => Rec): unknown => {
    if (!envelope) return isRec(value) ? fn(value) : value;
    if (!isRec(value) || !isRec(value[envelope])) return value;
    return { ...value, [envelope]: fn(value[envelope] as Rec) };
  };
  const field = (old: string) => renames.reduce((n, [from, to]) => (n === from ? to : n), old);
  const backwards = (current: string) => renames.reduceRight((n, [from, to]) => (n === to ? from : n), current);
  const words = renames.length
    ? new RegExp(
        `\\b(${[...new Set(renames.map(([, to]) => to))].sort((a, b) => b.length - a.length).join('|')})\\b`,
        'g',
      )
    : undefined;
  const at = envelope ? 2 : 1;
  return {
    up: (body) =>
      inside(body, (record) => {
        const unknown: string[] = [];
        const out = steps.reduce((r, s) => s.up(r, unknown), record);
        if (unknown.length) {
          const errors: FieldError[] = unknown.map((k) => unknownKeyError(envelope ? `/${envelope}` : '', k));
          throw new ApiError('unknown_field', `Unknown field(s) in this API version: ${unknown.join(', ')}.`, errors);
        }
        return out;
      }),
    down: (record) => steps.reduceRight((r, s) => s.down(r), record),
    field,
    old: backwards,
    pointer: (pointer) => {
      const parts = pointer.split('/');
      const segment = parts[at];
      if (segment === undefined) return pointer;
      parts[at] = backwards(segment);
      return parts.join('/');
    },
    message: (text) => (words ? text.replace(words, (w) => backwards(w)) : text),
  };
};
