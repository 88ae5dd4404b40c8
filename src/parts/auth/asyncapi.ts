import type { Plan } from '../../plan/types.ts';
import type { OpenApiObject } from '../openapi-model.ts';
import { routeAccess } from './route-access.ts';
import { securitySchemeOf } from './security-scheme.ts';

/** AsyncAPI 3.0 security schemes, one per scheme of the spec (the same names as in the OpenAPI document). */
const asyncSecuritySchemes = (plan: Plan): Record<string, OpenApiObject> =>
  Object.fromEntries(
    [...plan.auth.schemes].map(([name, s]) => [name, securitySchemeOf(s, plan.auth.keyPrefix, 'httpApiKey')]),
  );

/**
 * What the stream server asks of a client: its security (any one of the listed schemes; when the spec asks for
 * all of several at once the description says so), and the schemes those refer to. Nothing when it is public.
 */
export const streamSecurity = (
  plan: Plan,
): { security: OpenApiObject[]; schemes: Record<string, OpenApiObject>; note?: string } | undefined => {
  const { access } = routeAccess(plan, { action: 'events.stream', builtIn: 'api' });
  if (access.kind === 'public') return undefined;
  const schemes = asyncSecuritySchemes(plan);
  const used = access.schemes.filter((s) => schemes[s]);
  return {
    security: used.map((s) => ({ $ref: `#/components/securitySchemes/${s}` })),
    schemes: Object.fromEntries(used.map((s) => [s, schemes[s] as OpenApiObject])),
    ...(access.kind === 'all' && used.length > 1 ? { note: `Every one of ${used.join(', ')} at once.` } : {}),
  };
};
