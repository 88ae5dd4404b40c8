import { specAtVersion } from '../parts/versioning/spec-at-version.ts';
import { buildPlan } from '../plan/build-plan.ts';
import type { Plan } from '../plan/types.ts';
import { buildAsyncApi } from './asyncapi.ts';
import { buildOpenApi } from './openapi.ts';

/** The plan as a caller of an older version sees it (its records' fields as that version names and types them). */
export const planAtVersion = (plan: Plan, id: string): Plan => {
  if (!plan.versioning) return plan;
  const spec = specAtVersion(plan.spec, id);
  return spec === plan.spec ? plan : buildPlan(spec, plan.dir);
};

/** The OpenAPI document of one declared version: /openapi/<version>.json and `ninefold openapi --api-version`. */
export const buildOpenApiAt = (plan: Plan, id: string): Record<string, unknown> =>
  buildOpenApi(planAtVersion(plan, id), id);

/** /openapi.json: the newest version's document (without what that version removed), or the one document. */
export const buildOpenApiNewest = (plan: Plan): Record<string, unknown> =>
  plan.versioning ? buildOpenApiAt(plan, plan.versioning.newest) : buildOpenApi(plan);

/** The AsyncAPI document of one declared version: /asyncapi/<version>.json and `ninefold asyncapi --api-version`. */
export const buildAsyncApiAt = (plan: Plan, id: string): Record<string, unknown> =>
  buildAsyncApi(planAtVersion(plan, id), id);
