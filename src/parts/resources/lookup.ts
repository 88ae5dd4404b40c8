import { isRecord, recordEntries } from '../../spec/check-context.ts';
import type { ServiceSpec } from '../../spec/schema.ts';
import { SYSTEM_FIELDS } from './system-fields.ts';

/** A spec node that has not been trusted yet: checks read it through these helpers, never by its declared type. */
export type Raw = Record<string, unknown>;

/** The declared resources by name; malformed entries are skipped. */
export const resourceMap = (spec: ServiceSpec): Map<string, Raw> => new Map(recordEntries<Raw>(spec.resources));

/** A resource's declared fields by name. */
export const fieldMap = (resource: unknown): Map<string, Raw> =>
  new Map(recordEntries<Raw>(isRecord(resource) ? resource.fields : undefined));

/** The resource's state machine, when it declares one. */
export const machineOf = (resource: unknown): Raw | undefined =>
  isRecord(resource) && isRecord(resource.states) ? resource.states : undefined;

/** The state field of a resource with a state machine (default `status`). */
export const stateFieldOf = (resource: unknown): string | undefined => {
  const machine = machineOf(resource);
  if (!machine) return undefined;
  return typeof machine.field === 'string' ? machine.field : 'status';
};

/** Every field a caller can name on a record: declared, system and the state field. */
export const knownFieldNames = (resource: unknown): Set<string> => {
  const names = new Set<string>([...fieldMap(resource).keys(), ...SYSTEM_FIELDS]);
  const stateField = stateFieldOf(resource);
  if (stateField) names.add(stateField);
  return names;
};

/** A machine's transitions by name. */
export const transitionMap = (resource: unknown): Map<string, Raw> =>
  new Map(recordEntries<Raw>(machineOf(resource)?.transitions));

/**
 * Read-only fields nothing ever writes: no default, not the state field, and no transition input of the same
 * name to copy into them. Clients cannot write them either, so they never hold a value.
 */
export const neverFilledFields = (resource: unknown): Set<string> => {
  const stateField = stateFieldOf(resource);
  const inputs = new Set([...transitionMap(resource).values()].flatMap((t) => Object.keys(asRecord(t.input))));
  return new Set(
    [...fieldMap(resource)]
      .filter(([name, f]) => f.readOnly === true && f.default === undefined && name !== stateField && !inputs.has(name))
      .map(([name]) => name),
  );
};

/** A spec node as an untrusted map: an empty one when it is not a map. */
export const asRecord = (value: unknown): Raw => (isRecord(value) ? value : {});
