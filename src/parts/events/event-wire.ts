import type { Plan, ResourcePlan } from '../../plan/types.ts';
import { createWireRecord, objectNames, toWire } from '../endpoints/wire-names.ts';

/**
 * An event's data as its resource's wire shows records: the record renamed and given its `object` member (never
 * an envelope), `changed` naming fields as the wire does, a transition's input renamed. Resources served in the
 * engine's own shape pass untouched.
 */
export const createEventWire = (plan: Plan) => {
  const records = new Map(plan.resources.map((r) => [r.name, createWireRecord(r)]));
  const inputs = new Map(
    plan.resources.flatMap((r) =>
      (r.states?.transitions ?? []).map((t) => [`${r.name}.${t.name}`, objectNames(r.wire.naming, t.input ?? {})]),
    ),
  );
  return (resource: ResourcePlan, data: Record<string, unknown>): Record<string, unknown> => {
    if (resource.wire.plain) return data;
    const out = { ...data };
    const record = data.record as Record<string, unknown> | undefined;
    if (record) out.record = records.get(resource.name)?.(record) ?? record;
    if (Array.isArray(data.changed))
      out.changed = data.changed.map((f) => resource.wire.names.out.get(String(f))?.name ?? f);
    const names = inputs.get(`${resource.name}.${String(data.transition)}`);
    if (names && data.input !== undefined) out.input = toWire(data.input, names);
    return out;
  };
};
