import type { ServiceSpec } from '../../spec/schema.ts';
import type { ComputedScope } from './computed-cel.ts';
import { fieldMap, resourceMap, stateFieldOf } from './lookup.ts';

const SYSTEM_TYPES: Readonly<Record<string, string>> = {
  id: 'string',
  createdAt: 'datetime',
  updatedAt: 'datetime',
};

/** The resources and their fields' types, as the spec declares them (read defensively: checks use it too). */
export const computedScope = (spec: ServiceSpec): ComputedScope => {
  const resources = resourceMap(spec);
  return {
    resources: [...resources.keys()],
    fieldType(resource, field) {
      const r = resources.get(resource);
      if (!r) return undefined;
      if (SYSTEM_TYPES[field]) return SYSTEM_TYPES[field];
      if (field === stateFieldOf(r)) return 'enum';
      const type = fieldMap(r).get(field)?.type;
      return typeof type === 'string' ? type : undefined;
    },
  };
};
