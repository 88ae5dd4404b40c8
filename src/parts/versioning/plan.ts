import type { ResourcePlan } from '../../plan/types.ts';
import type { ServiceSpec } from '../../spec/schema.ts';
import type { ChangeSchema } from './schema.ts';
import { compileShift, type RecordShift } from './shift.ts';

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
}

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
  const shifts = new Map<string, Map<string, RecordShift>>();
  for (let i = 0; i < ids.length - 1; i++) {
    // The changes of every later version, oldest first: what turns a record of version i into the newest.
    const later = v.versions.slice(i + 1).flatMap((x) => x.changes ?? []);
    const perResource = new Map<string, RecordShift>();
    for (const name of new Set(later.map((c) => c.resource))) {
      const resource = byName.get(name);
      if (!resource) continue;
      const shift = compileShift(
        resource,
        later.filter((c) => c.resource === name),
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
  };
};
