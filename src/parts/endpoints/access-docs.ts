import type { Operation, Plan } from '../../plan/types.ts';
import { codes, type Span } from '../docs-model.ts';
import { resourceEndpointsSpec } from './plan.ts';
import type { AccessSchema, OperationOverrideSchema } from './schema.ts';

type Access = (typeof AccessSchema)['static'];
type Overrides = Partial<Record<Operation, (typeof OperationOverrideSchema)['static']>>;

/** `public`, `any of key, token`, `all of key, mtls`, then the roles an endpoint asks for. */
export const accessSpans = (access: Access | undefined, roles: readonly string[] | undefined): Span[] => {
  const out: Span[] = [];
  if (access === undefined || access === 'public') out.push(access ?? 'no authentication');
  else if (Array.isArray(access)) out.push(access.length > 1 ? 'any of ' : '', ...codes(access));
  else out.push('all of ', ...codes(access.all));
  if (roles?.length) out.push('; roles ', ...codes(roles));
  return out.filter((s) => s !== '');
};

const defaultAccess = (plan: Plan): Access | undefined => plan.spec.auth?.require;

/** Who may call a resource's operation: its override, else the resource's, else the spec's default. */
export const operationAccess = (plan: Plan, resource: string, op: Operation): Span[] => {
  const entry = resourceEndpointsSpec(plan.spec, resource);
  const override = (entry?.overrides as Overrides | undefined)?.[op];
  return accessSpans(override?.require ?? entry?.require ?? defaultAccess(plan), override?.roles);
};

/** Who may call a transition endpoint: the resource's access, plus the transition's roles. */
export const transitionAccess = (plan: Plan, resource: string, roles: readonly string[]): Span[] => {
  const entry = resourceEndpointsSpec(plan.spec, resource);
  return accessSpans(entry?.require ?? defaultAccess(plan), roles);
};

/** Who may call a custom endpoint (the plan does not carry its access yet, so it is read from the spec). */
export const customAccess = (plan: Plan, name: string): Span[] => {
  const custom = plan.spec.endpoints?.custom?.find((c) => c.name === name);
  return accessSpans(custom?.require ?? defaultAccess(plan), custom?.roles);
};
