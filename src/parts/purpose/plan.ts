import type { ServicePlan } from '../../plan/types.ts';
import type { ServiceSpec } from '../../spec/schema.ts';

export const planService = (spec: ServiceSpec): ServicePlan => {
  const name = spec.service?.name ?? 'service';
  return {
    name,
    title: spec.service?.title ?? name,
    ...(spec.service?.purpose ? { purpose: spec.service.purpose } : {}),
    ...(spec.service?.behaviour ? { behaviour: spec.service.behaviour } : {}),
    basePath: spec.endpoints?.basePath ?? '',
  };
};
