import type { Plan } from '../../plan/types.ts';
import type { RouteSpec } from '../../runtime/route-spec.ts';
import { objectNames } from '../endpoints/wire-names.ts';
import { wireRecordRoute } from '../endpoints/wire-runtime.ts';

/** A transition route on its resource's wire: its input renamed, the record it answers shaped as the wire shows it. */
export const onWire = (plan: Plan, route: RouteSpec): RouteSpec => {
  const resource = route.kind.transition ? plan.resourcesByName.get(route.kind.resource ?? '') : undefined;
  if (!resource || resource.wire.plain) return route;
  const transition = resource.states?.transitions.find((t) => t.name === route.kind.action);
  const names = objectNames(resource.wire.naming, transition?.input ?? {});
  return { ...route, handler: wireRecordRoute(resource, route.handler, { names }) };
};
