import { specAtVersion } from '../parts/versioning/spec-at-version.ts';
import { buildPlan } from '../plan/build-plan.ts';
import type { Plan } from '../plan/types.ts';
import { buildAsyncApi } from './asyncapi.ts';
import { buildOpenApi } from './openapi.ts';

/** The plan as a caller of an older version sees it (its records' fields as that version names and types them). */
export const planAtVersion = (plan: Plan, id: string): Plan =>
  !plan.versioning || id === plan.versioning.newest ? plan : buildPlan(specAtVersion(plan.spec, id), plan.dir);

/** The OpenAPI document of one declared version: /openapi/<version>.json and `ninefold openapi --api-version`. */
export const buildOpenApiAt = (plan: Plan, id: string): Record<string, unknown> =>
  buildOpenApi(planAtVersion(plan, id), id);

/** The AsyncAPI document of one declared version: /asyncapi/<version>.json and `ninefold asyncapi --api-version`. */
export const buildAsyncApiAt = (plan: Plan, id: string): Record<string, unknown> =>
  buildAsyncApi(planAtVersion(plan, id), id);
