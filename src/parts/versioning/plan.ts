import type { ResourcePlan } from '../../plan/types.ts';
import type { ServiceSpec } from '../../spec/schema.ts';
import { findOperation, operationKey } from './operation-name.ts';
import type { ChangeSchema } from './schema.ts';
import { compileShift, type RecordShift } from './shift.ts';
import type { TransformModules } from './transform.ts';

export type Change = (typeof ChangeSchema)['static'];

/** One declared version, with what its answers say about its retirement. */
export interface VersionPlan {
  readonly id: string;
  readonly index: number;
  /** RFC 9745: when it was (or will be) deprecated, as unix seconds. */
  readonly deprecation?: number;
  /** RFC 8594: after this instant (milliseconds) the version answers 410. */
  readonly sunsetMs?: number;
  /** The Sunset header's HTTP-date. */
  readonly sunset?: string;
  /** Where the deprecation is explained (Link rel="deprecation" and rel="sunset"). */
  readonly link?: string;
  readonly deprecated: boolean;
}

/** The versioning part compiled: how a request names its version, and each older version's shifts per resource. */
export interface VersioningPlan {
  readonly scheme: 'path' | 'header' | 'query' | 'media-type';
  /** Header name (lower case), query parameter or media-type parameter. */
  readonly name: string;
  readonly ids: readonly string[];
  readonly byId: ReadonlyMap<string, VersionPlan>;
  readonly newest: string;
  /** Served when a request (and its key) names none. */
  readonly fallback: string;
  /** The media type of the media-type scheme: application/vnd.<service>+json. */
  readonly mediaType: string;
  /** Version → resource → how its records change between that version and the newest (absent: none). */
  readonly shifts: ReadonlyMap<string, ReadonlyMap<string, RecordShift>>;
  /**
   * Version → what it does not have: operations (`Customer.delete`, `POST /customers/{id}/archive`), transitions
   * (`Order.ship`) and event types added after it or removed in it or before. Absent: it has everything.
   */
  readonly absent: ReadonlyMap<string, ReadonlySet<string>>;
  /** Version → error code of the newest → the code and status that version answers instead. */
  readonly errors: ReadonlyMap<string, ReadonlyMap<string, OldError>>;
  /** Transform modules by the path the spec gives, loaded at start-up (versioning part). */
  readonly transforms: TransformModules;
}

/** An error as an older version answers it. */
export interface OldError {
  readonly code: string;
  readonly status?: number;
}

type VersionSpec = NonNullable<ServiceSpec['versioning']>['versions'][number];

/** The operations, transitions and events added after version `i`, or removed in it or before it. */
const absentAt = (spec: ServiceSpec, versions: readonly VersionSpec[], i: number): Set<string> => {
  const out = new Set<string>();
  const operation = (name: string | undefined) => {
    const found = name ? findOperation(spec, name) : undefined;
    return found ? operationKey(found) : undefined;
  };
  for (const [v, version] of versions.entries())
    for (const c of version.changes ?? []) {
      const transition = (name: string | undefined) => (name ? `${c.resource ?? ''}.${name}` : undefined);
      const added = [operation(c['add-operation']), transition(c['add-transition']), c['add-event']];
      const removed = [operation(c['remove-operation']), transition(c['remove-transition']), c['remove-event']];
      for (const name of v > i ? added : removed) if (name) out.add(name);
    }
  return out;
};

/** Error codes of the newest as version `i` answers them: each later version's error change undone, newest first. */
const errorsAt = (versions: readonly VersionSpec[], i: number): Map<string, OldError> => {
  const changes = versions.slice(i + 1).flatMap((v) => (v.changes ?? []).flatMap((c) => (c.error ? [c.error] : [])));
  const out = new Map<string, OldError>();
  const codes = new Set(changes.map((e) => e.code));
  for (const code of codes) {
    let shown: OldError = { code };
    for (const e of [...changes].reverse())
      if (e.code === shown.code)
        shown = { code: e.was.code ?? e.code, ...(e.was.status ? { status: e.was.status } : {}) };
    out.set(code, shown);
  }
  return out;
};

const dayMs = (date: string | undefined): number | undefined =>
  date === undefined ? undefined : Date.parse(`${date}T00:00:00Z`);

/** Compiles part 9 once; undefined when the spec declares no versioning. */
export const planVersioning = (
  spec: ServiceSpec,
  resources: readonly ResourcePlan[],
  service: string,
): VersioningPlan | undefined => {
  const v = spec.versioning;
  if (!v) return undefined;
  const ids = v.versions.map((x) => x.id);
  const byId = new Map<string, VersionPlan>();
  for (const [index, version] of v.versions.entries()) {
    const dates = v.deprecated?.[version.id];
    const deprecationMs = dayMs(dates?.deprecation);
    const sunsetMs = dayMs(dates?.sunset);
    byId.set(version.id, {
      id: version.id,
      index,
      deprecated: dates !== undefined,
      ...(deprecationMs !== undefined ? { deprecation: Math.floor(deprecationMs / 1000) } : {}),
      ...(sunsetMs !== undefined ? { sunsetMs, sunset: new Date(sunsetMs).toUTCString() } : {}),
      ...(dates?.link ? { link: dates.link } : {}),
    });
  }
  const byName = new Map(resources.map((r) => [r.name, r]));
  const transforms: TransformModules = new Map();
  const shifts = new Map<string, Map<string, RecordShift>>();
  const absent = new Map<string, Set<string>>();
  const errors = new Map<string, Map<string, OldError>>();
  for (const [i, id] of ids.entries()) {
    const gone = absentAt(spec, v.versions, i);
    if (gone.size) absent.set(id, gone);
    const changed = errorsAt(v.versions, i);
    if (changed.size) errors.set(id, changed);
  }
  for (let i = 0; i < ids.length - 1; i++) {
    // The changes of every later version, oldest first: what turns a record of version i into the newest.
    const later = v.versions.slice(i + 1).flatMap((x) => x.changes ?? []);
    const perResource = new Map<string, RecordShift>();
    for (const name of new Set(later.flatMap((c) => (records(c) && c.resource ? [c.resource] : [])))) {
      const resource = byName.get(name);
      if (!resource) continue;
      const shift = compileShift(
        resource,
        later.filter((c) => c.resource === name && records(c)),
        transforms,
      );
      perResource.set(name, shift);
    }
    shifts.set(ids[i] as string, perResource);
  }
  const newest = ids.at(-1) as string;
  const defaultName = v.scheme === 'header' ? 'Api-Version' : 'version';
  return {
    scheme: v.scheme,
    name: v.scheme === 'header' ? (v.name ?? defaultName).toLowerCase() : (v.name ?? defaultName),
    ids,
    byId,
    newest,
    fallback: v.default ?? newest,
    mediaType: `application/vnd.${service}+json`,
    shifts,
    absent,
    errors,
    transforms,
  };
};

/** Whether a change reshapes records (the others change routes, events or errors). */
const records = (c: Change): boolean =>
  Boolean(c.rename || c.add || c.remove || c.retype || c.require || c['enum-add'] || c.move || c.transform);
