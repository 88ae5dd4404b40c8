import { planAuth } from '../parts/auth/plan.ts';
import { planCustomEndpoints } from '../parts/endpoints/plan.ts';
import { planErrors } from '../parts/errors/plan.ts';
import { planEvents } from '../parts/events/plan.ts';
import { planLimits } from '../parts/limits/plan.ts';
import { planService } from '../parts/purpose/plan.ts';
import { planResource } from '../parts/resources/plan.ts';
import { planVersioning } from '../parts/versioning/plan.ts';
import type { ServiceSpec } from '../spec/schema.ts';
import type { Plan } from './types.ts';

const deepFreeze = <T>(value: T): T => {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    if (value instanceof Map) for (const v of value.values()) deepFreeze(v);
    else if (value instanceof Set) {
      /* members are strings */
    } else for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
};

/** Compiles a checked spec into the frozen plan every later stage reads. Call only on a spec without errors. */
export const buildPlan = (spec: ServiceSpec, dir = process.cwd()): Plan => {
  const limits = planLimits(spec);
  const resources = Object.entries(spec.resources ?? {}).map(([name, r]) =>
    planResource(spec, name, r, limits.maxPageSize),
  );
  const service = planService(spec);
  const versioning = planVersioning(spec, resources, service.name);
  return deepFreeze({
    spec,
    dir,
    service,
    resources,
    resourcesByName: new Map(resources.map((r) => [r.name, r])),
    custom: planCustomEndpoints(spec),
    errors: planErrors(spec),
    limits,
    auth: planAuth(spec),
    events: planEvents(spec),
    ...(versioning ? { versioning } : {}),
  });
};
