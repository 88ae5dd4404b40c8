import type { Plan } from '../../plan/types.ts';
import { createRecordDown } from './answer-shift.ts';

interface View {
  readonly id: string;
  readonly type: string;
  readonly time: string;
  readonly data: Record<string, unknown>;
}

const isRec = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * An event as a receiver pinned to an older API version reads it: the record (and the record before a change)
 * shown in that version, and the names of changed fields as that version spells them. Newest or unpinned: as is.
 */
export const createEventShift = (plan: Plan) => {
  const versioning = plan.versioning;
  if (!versioning) return <T extends View>(view: T): T => view;
  const records = createRecordDown(plan, versioning);
  return <T extends View>(view: T, apiVersion: string | undefined, resource: string | undefined): T => {
    if (!apiVersion || apiVersion === versioning.newest || !resource || !records.differs(apiVersion, resource))
      return view;
    const data: Record<string, unknown> = { ...view.data };
    for (const key of ['record', 'before', 'previous'])
      if (isRec(data[key])) data[key] = records.down(apiVersion, resource, data[key] as Record<string, unknown>);
    const shift = versioning.shifts.get(apiVersion)?.get(resource);
    if (shift && Array.isArray(data.changed))
      data.changed = data.changed.map((name) => (typeof name === 'string' ? shift.old(name) : name));
    return { ...view, data };
  };
};

/**
 * Whether a receiver pinned to `apiVersion` may be sent an event of this type: not when the type was added after
 * that version or removed in it or before (`add-event`, `remove-event`). Unpinned receivers get every type.
 */
export const eventInVersion =
  (plan: Plan) =>
  (type: string, apiVersion: string | undefined): boolean =>
    apiVersion === undefined || !plan.versioning?.absent.get(apiVersion)?.has(type);
