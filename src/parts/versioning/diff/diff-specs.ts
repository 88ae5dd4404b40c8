import type { ServiceSpec } from '../../../spec/schema.ts';
import type { PathSegment, SourceMap } from '../../../spec/source-map.ts';
import { DiffCollector, isRec, listOf, recOf, type SpecChange, same } from './diff-collector.ts';
import { coversOf, declaredRemovals } from './diff-covers.ts';
import { diffErrors, diffEvents, diffLimits, diffVersioning } from './diff-delivery.ts';
import { diffAuth, diffEndpoints } from './diff-interface.ts';
import { diffResources } from './diff-resources.ts';

export { DIFF_RULES, type DiffRule } from './diff-rules.ts';

/** One spec of a diff: what it says and where each of its nodes sits. */
export interface DiffSide {
  readonly spec: ServiceSpec;
  readonly source: SourceMap;
}

/** A change with its place (file:line:col) and the new version whose changes cover it, if one does. */
export interface LocatedChange extends SpecChange {
  readonly file: string;
  readonly line?: number;
  readonly col?: number;
  readonly coveredBy?: string;
}

const DOCS = new Set(['description', 'title', 'summary', 'purpose', 'behaviour', 'contact', 'example', '$schema']);

/** What no comparator judged: documentation is safe, anything else is taken as breaking. */
const walk = (d: DiffCollector, o: unknown, n: unknown, path: PathSegment[]) => {
  const pointer = path.map((s) => `/${String(s).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
  if (d.claimed(pointer) || same(o, n)) return;
  if (isRec(o) && isRec(n)) {
    for (const k of new Set([...Object.keys(o), ...Object.keys(n)])) walk(d, o[k], n[k], [...path, k]);
    return;
  }
  const side = n === undefined ? 'old' : 'new';
  const docs = path.some((s) => DOCS.has(String(s)));
  d.add(docs ? 'docs-changed' : 'other-change', side, path, `${path.join('.')} changed`);
};

/**
 * The renames new versions declare, per resource (new name → old name): the new spec's versions whose id the old
 * spec does not have. A field gone under one name and new under another is a rename only when a version says so.
 */
const newVersions = (old: ServiceSpec, now: ServiceSpec) => {
  const known = new Set(listOf(old.versioning?.versions).map((v) => recOf(v).id));
  return (now.versioning?.versions ?? []).filter((v) => !known.has(v.id));
};

/** Every change from `old` to `now`, classed by DIFF_RULES, located, and matched to the new versions covering it. */
export const diffSpecs = (old: DiffSide, now: DiffSide): LocatedChange[] => {
  const d = new DiffCollector();
  const added = newVersions(old.spec, now.spec);
  const covers = new Map<string, string>();
  const renames = new Map<string, Map<string, string>>();
  for (const version of added)
    for (const c of version.changes ?? []) {
      const key = (kind: string, field: string) => covers.set(`${c.resource}\0${kind}\0${field}`, version.id);
      if (c.rename && c.resource) {
        key('rename', `${c.rename.from}>${c.rename.to}`);
        const map = renames.get(c.resource) ?? new Map<string, string>();
        renames.set(c.resource, map.set(c.rename.to, c.rename.from));
      }
      if (c.add) key('add', c.add);
      if (c.remove) key('remove', c.remove);
      if (c.retype) key('retype', c.retype.field);
    }
  const a = old.spec as unknown as Record<string, unknown>;
  const b = now.spec as unknown as Record<string, unknown>;
  const renamesOf = (r: string) => renames.get(r) ?? new Map<string, string>();
  diffResources(d, a.resources, b.resources, renamesOf);
  diffEndpoints(d, a.endpoints, b.endpoints, renamesOf);
  diffAuth(d, a.auth, b.auth);
  diffEvents(d, a.events, b.events);
  diffErrors(d, a.errors, b.errors);
  diffLimits(d, a.limits, b.limits);
  diffVersioning(d, a.versioning, b.versioning);
  d.claim(['service', 'name']);
  if (recOf(a.service).name !== recOf(b.service).name)
    d.add('other-change', 'new', ['service', 'name'], 'service name changed (its media type and event sources)');
  walk(d, a, b, []);
  const removals = new Set(declaredRemovals(d, now.spec, added));
  const declared = coversOf(added);
  return d.changes
    .map((c): LocatedChange => {
      const source = c.side === 'old' ? old.source : now.source;
      const at = source.locate(c.pointer, 'key');
      const s = c.subject;
      const coveredBy = !c.breaking
        ? undefined
        : removals.has(c)
          ? (now.spec.versioning?.versions[Number(c.pointer.split('/')[3])]?.id as string)
          : ((s ? covers.get(`${s.resource}\0${s.kind}\0${s.field}`) : undefined) ??
            declared.find((x) => x.covers(c))?.version);
      return { ...c, file: source.file, ...(at ?? {}), ...(coveredBy ? { coveredBy } : {}) };
    })
    .sort(
      (x, y) =>
        (x.side === y.side ? 0 : x.side === 'new' ? -1 : 1) ||
        (x.line ?? 0) - (y.line ?? 0) ||
        (x.col ?? 0) - (y.col ?? 0),
    );
};
