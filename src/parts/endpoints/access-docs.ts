import type { Operation, Plan } from '../../plan/types.ts';
import type { Access } from '../auth/plan.ts';
import { routeAccess } from '../auth/route-access.ts';
import { codes, type Span } from '../docs-model.ts';

/** `no authentication`, `any of key, token`, `all of key, mtls`, then the roles an endpoint asks for. */
export const accessSpans = (access: Access, roles: readonly string[]): Span[] => {
  const out: Span[] = [];
  if (access.kind === 'public') out.push('no authentication');
  else if (access.kind === 'any') out.push(access.schemes.length > 1 ? 'any of ' : '', ...codes(access.schemes));
  else out.push('all of ', ...codes(access.schemes));
  if (roles.length) out.push('; roles ', ...codes(roles));
  return out.filter((s) => s !== '');
};

const spansOf = ({ access, roles }: ReturnType<typeof routeAccess>) => accessSpans(access, roles);

/** Who may call a resource's operation, as the server decides it. */
export const operationAccess = (plan: Plan, resource: string, op: Operation): Span[] =>
  spansOf(routeAccess(plan, { resource, action: op }));

/** Who may call a transition endpoint: the resource's access, plus the transition's roles. */
export const transitionAccess = (plan: Plan, resource: string, transition: string): Span[] =>
  spansOf(routeAccess(plan, { resource, action: transition, transition: true }));

/** Who may call a custom endpoint. */
export const customAccess = (plan: Plan, name: string): Span[] =>
  spansOf(routeAccess(plan, { action: name, custom: true }));
