import type { FieldPlan, ListEnvelopePlan, PagingStyle, ResourcePlan, WirePlan } from '../../plan/types.ts';
import type { ServiceSpec } from '../../spec/schema.ts';
import { createPointerNamer, type Naming, recordNames, wireName } from './wire-names.ts';
import type { ListEnvelopeSpec, WireSpec } from './wire-schema.ts';

/** The service-wide `endpoints.wire`, if any. */
export const serviceWire = (spec: ServiceSpec): WireSpec | undefined =>
  (spec.endpoints as { wire?: WireSpec } | undefined)?.wire;

/** A resource's own `wire` laid over the service's: each setting from the nearest that gives it. */
export const mergedWire = (service: WireSpec | undefined, own: WireSpec | undefined): WireSpec => {
  const list: ListEnvelopeSpec | undefined =
    service?.list || own?.list ? { ...service?.list, ...own?.list } : undefined;
  return { ...service, ...own, ...(list ? { list } : {}) };
};

/** A member name: the spec's (null: none), else the default named in the wire's naming. */
const member = (given: string | null | undefined, fallback: string | undefined, naming: Naming) =>
  given === null ? undefined : (given ?? (fallback === undefined ? undefined : wireName(naming, fallback)));

export const planListEnvelope = (wire: WireSpec, paging: PagingStyle, naming: Naming): ListEnvelopePlan => {
  const list = wire.list ?? {};
  const next = paging === 'cursor' ? member(list.next, 'nextCursor', naming) : undefined;
  const total = member(list.total, paging === 'offset' || paging === 'cursor' ? 'total' : undefined, naming);
  const hasMore = paging === 'starting_after' ? member(list.hasMore, 'has_more', naming) : undefined;
  return {
    items: list.items === null ? null : (list.items ?? 'data'),
    ...(next ? { next } : {}),
    ...(total ? { total } : {}),
    ...(hasMore ? { hasMore } : {}),
    extras: Object.entries(list.extras ?? {}).map(([name, value]) => ({
      name,
      value,
      templated: typeof value === 'string' && value.includes('{path}'),
    })),
  };
};

/** Compiles how one resource's records travel, once. */
export const planWire = (
  service: WireSpec | undefined,
  own: WireSpec | undefined,
  fields: readonly FieldPlan[],
  object: string | undefined,
  computed: readonly string[] = [],
): WirePlan => {
  const wire = mergedWire(service, own);
  const naming = wire.naming ?? 'camelCase';
  const paging = wire.paging ?? 'cursor';
  const names = recordNames(naming, fields, computed);
  const envelope = wire.envelope ?? undefined;
  return {
    naming,
    paging,
    list: planListEnvelope(wire, paging, naming),
    ...(envelope ? { envelope } : {}),
    plain: names.out.size === 0 && envelope === undefined && object === undefined,
    names,
    pointer: createPointerNamer(names),
  };
};

/** A list answered as the engine always has: `{data, nextCursor}`, cursor paging. */
export const isConventionalList = (resource: ResourcePlan): boolean => {
  const { paging, list } = resource.wire;
  return (
    paging === 'cursor' &&
    list.items === 'data' &&
    list.next === 'nextCursor' &&
    list.total === 'total' &&
    list.hasMore === undefined &&
    list.extras.length === 0
  );
};
