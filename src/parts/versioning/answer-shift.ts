import type { Plan, ResourcePlan } from '../../plan/types.ts';
import { ApiError } from '../errors/api-error.ts';
import type { VersioningPlan } from './plan.ts';
import type { RecordShift } from './shift.ts';

type Rec = Record<string, unknown>;
const isRec = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Records of the newest version as an older version shows them: the resource's own shift, and the shift of each
 * expanded reference's resource (an expanded `customer` is a Customer of the caller's version too).
 */
export const createRecordDown = (plan: Plan, versioning: VersioningPlan) => {
  const refs = new Map<string, ReadonlyArray<readonly [string, string]>>(
    plan.resources.map((r) => [
      r.name,
      r.fields.flatMap((f) => (f.ref ? [[r.wire.names.out.get(f.name)?.name ?? f.name, f.ref.to] as const] : [])),
    ]),
  );
  const down = (version: string, resource: string, record: Rec): Rec => {
    let out = record;
    for (const [field, target] of refs.get(resource) ?? []) {
      const value = out[field];
      if (isRec(value)) {
        const shown = down(version, target, value);
        if (shown !== value) out = { ...out, [field]: shown };
      }
    }
    const shift = versioning.shifts.get(version)?.get(resource);
    return shift ? shift.down(out) : out;
  };
  /** Whether a record of this resource can differ in this version (itself, or a reference it expands). */
  const differs = (version: string, resource: string, seen = new Set<string>()): boolean => {
    if (seen.has(resource)) return false;
    seen.add(resource);
    if (versioning.shifts.get(version)?.has(resource)) return true;
    return (refs.get(resource) ?? []).some(([, target]) => differs(version, target, seen));
  };
  return { down, differs };
};

/** A list answer or a record answer (in its envelope, if any) with each record shown in the older version. */
export const shiftAnswer = (
  resource: ResourcePlan,
  list: boolean,
  body: unknown,
  down: (record: Rec) => Rec,
): unknown => {
  if (list) {
    const items = resource.wire.list.items;
    if (items === null) return Array.isArray(body) ? body.map((r) => (isRec(r) ? down(r) : r)) : body;
    if (!isRec(body) || !Array.isArray(body[items])) return body;
    return { ...body, [items]: (body[items] as unknown[]).map((r) => (isRec(r) ? down(r) : r)) };
  }
  const envelope = resource.wire.envelope;
  if (!envelope) return isRec(body) ? down(body) : body;
  if (!isRec(body) || !isRec(body[envelope])) return body;
  return { ...body, [envelope]: down(body[envelope] as Rec) };
};

/** Shifts applied to list query parameters: filter keys (`name`, `name[contains]`), sort keys and expand names. */
export const shiftQuery = (query: Record<string, unknown>, shift: RecordShift): void => {
  for (const key of Object.keys(query)) {
    const value = query[key];
    if (key === 'sort' || key === 'expand') {
      if (typeof value === 'string')
        query[key] = value
          .split(',')
          .map((item) => {
            const sign = /^[-+]/.exec(item)?.[0] ?? '';
            return sign + shift.field(item.slice(sign.length));
          })
          .join(',');
      continue;
    }
    const match = /^([A-Za-z_][A-Za-z0-9_]*)(\[[a-z]+\])?$/.exec(key);
    if (!match) continue;
    const renamed = shift.field(match[1] as string);
    refuseNewValues(shift.newValues.get(renamed), match[1] as string, value);
    if (renamed === match[1]) continue;
    delete query[key];
    query[`${renamed}${match[2] ?? ''}`] = value;
  }
};

/** A filter value an older version cannot name: an enum value added after it (400, as any unknown value). */
const refuseNewValues = (added: ReadonlySet<string> | undefined, name: string, value: unknown) => {
  if (!added) return;
  for (const item of (Array.isArray(value) ? value : [value]).flatMap((v) => String(v).split(',')))
    if (added.has(item))
      throw new ApiError('invalid_filter', `"${item.slice(0, 64)}" is not a valid value for ${name}.`);
};
