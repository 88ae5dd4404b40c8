import { isRecord, stringList } from '../../spec/check-context.ts';
import type { ServiceSpec } from '../../spec/schema.ts';
import { resourceMap, transitionMap } from '../resources/lookup.ts';

/** Whether `events.auto` makes a resource's changes events: `true` covers every resource, a list the named ones. */
export const autoEventsCover = (spec: ServiceSpec): ((resource: string) => boolean) => {
  const events = isRecord(spec.events) ? spec.events : {};
  if (events.auto === true) return () => true;
  const auto = stringList(events.auto);
  return (resource) => auto.includes(resource);
};

/** Automatic events (when events.auto covers the resource) plus declared ones, as the runtime would emit them. */
export const knownEventNames = (spec: ServiceSpec): string[] => {
  const events = isRecord(spec.events) ? spec.events : {};
  const covers = autoEventsCover(spec);
  const names = new Set<string>();
  for (const [name, resource] of resourceMap(spec)) {
    if (!covers(name)) continue;
    for (const change of ['created', 'updated', 'deleted']) names.add(`${name}.${change}`);
    for (const t of transitionMap(resource).values()) {
      const event = typeof t.event === 'string' ? t.event : typeof t.to === 'string' ? `${name}.${t.to}` : undefined;
      if (event) names.add(event);
    }
  }
  if (isRecord(events.declared)) for (const name of Object.keys(events.declared)) names.add(name);
  return [...names];
};
