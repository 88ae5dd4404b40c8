import type { PathSegment } from '../../../spec/source-map.ts';
import { type DiffCollector, diffRoles, eachKey, isRec, listChange, listOf, recOf, same } from './diff-collector.ts';
import { diffFields } from './diff-fields.ts';

/** Part 6: event types, their payloads and audiences, callbacks, webhooks and the stream. */
export const diffEvents = (d: DiffCollector, o: unknown, n: unknown) => {
  const a = recOf(o);
  const b = recOf(n);
  const at = (...k: PathSegment[]) => ['events', ...k];
  d.claim(at('auto'));
  if (!same(a.auto, b.auto)) {
    const all = (v: unknown) => v === true;
    const gone = all(a.auto) ? !all(b.auto) : listChange(a.auto, all(b.auto) ? a.auto : b.auto).gone.length > 0;
    d.add(gone ? 'event-removed' : 'event-added', 'new', at('auto'), 'automatic events changed');
  }
  d.claim(at('declared'));
  eachKey(a.declared, b.declared, {
    removed: (k) => d.add('event-removed', 'old', at('declared', k), `event ${k} removed`),
    added: (k) => d.add('event-added', 'new', at('declared', k), `event ${k} added`),
    both: (k) => {
      const x = recOf(recOf(a.declared)[k]);
      const y = recOf(recOf(b.declared)[k]);
      diffFields(d, x.payload, y.payload, at('declared', k, 'payload'), `event ${k} payload`, 'out');
      diffRoles(d, x.roles, y.roles, at('declared', k, 'roles'), `event ${k}`);
      if (x.description !== y.description) d.add('docs-changed', 'new', at('declared', k), `event ${k} description`);
    },
  });
  d.claim(at('callbacks'));
  eachKey(a.callbacks, b.callbacks, {
    removed: (k) => d.add('event-removed', 'old', at('callbacks', k), `${k} callbacks removed`),
    added: (k) => d.add('event-added', 'new', at('callbacks', k), `${k} callbacks added`),
    both: (k) => {
      const x = recOf(recOf(a.callbacks)[k]);
      const y = recOf(recOf(b.callbacks)[k]);
      const { gone, added } = listChange(x.events, y.events);
      if (gone.length)
        d.add('event-removed', 'new', at('callbacks', k, 'events'), `${k} callbacks: ${gone.join(', ')}`);
      if (added.length)
        d.add('event-added', 'new', at('callbacks', k, 'events'), `${k} callbacks: ${added.join(', ')}`);
      if (x.field !== y.field) d.add('behaviour-changed', 'new', at('callbacks', k, 'field'), `${k} callback field`);
    },
  });
  const wa = recOf(a.webhooks);
  const wb = recOf(b.webhooks);
  d.claim(at('webhooks', 'retry'));
  if (!same(wa.retry, wb.retry)) d.add('docs-changed', 'new', at('webhooks', 'retry'), 'webhook retry schedule');
  d.claim(at('webhooks', 'signing'));
  if (wa.signing !== wb.signing) d.add('behaviour-changed', 'new', at('webhooks', 'signing'), 'webhook signing');
  d.claim(at('stream', 'path'));
  const sa = isRec(a.stream) ? (a.stream.path ?? '/events/stream') : undefined;
  const sb = isRec(b.stream) ? (b.stream.path ?? '/events/stream') : undefined;
  if (sa !== sb)
    d.add(
      sb === undefined ? 'path-changed' : sa === undefined ? 'operation-added' : 'path-changed',
      sb ? 'new' : 'old',
      at('stream'),
      `event stream ${sa ?? '(none)'} → ${sb ?? '(none)'}`,
    );
};

/** Part 7: the error format and each code's status. */
export const diffErrors = (d: DiffCollector, o: unknown, n: unknown) => {
  const a = recOf(o);
  const b = recOf(n);
  d.claim(['errors', 'catalogue']);
  eachKey(a.catalogue, b.catalogue, {
    removed: (k) => d.add('error-added', 'old', ['errors', 'catalogue', k], `error ${k} no longer used`),
    added: (k) => d.add('error-added', 'new', ['errors', 'catalogue', k], `error ${k} added`),
    both: (k) => {
      const x = recOf(recOf(a.catalogue)[k]);
      const y = recOf(recOf(b.catalogue)[k]);
      const path = ['errors', 'catalogue', k];
      if (x.status !== y.status)
        d.add('status-changed', 'new', [...path, 'status'], `error ${k}: status ${x.status} → ${y.status}`);
      const { status: _a, ...restA } = x;
      const { status: _b, ...restB } = y;
      if (!same(restA, restB)) d.add('docs-changed', 'new', path, `error ${k}: title or description`);
    },
  });
  for (const key of ['format', 'typeBase', 'payload']) {
    d.claim(['errors', key]);
    if (!same(a[key], b[key])) d.add('error-format-changed', 'new', ['errors', key], `errors ${key} changed`);
  }
};

const UNIT: Record<string, number> = { s: 1, sec: 1, second: 1, m: 60, min: 60, minute: 60, h: 3600, hour: 3600 };
Object.assign(UNIT, { d: 86400, day: 86400, w: 604800, week: 604800, mo: 2592000, month: 2592000 });
const BYTES: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };
const ISO = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/i;

/** A limit as one number where more is looser: requests per second, bytes, seconds, items; else undefined. */
export const limitSize = (v: unknown): number | undefined => {
  if (typeof v === 'number') return v;
  if (typeof v !== 'string') return undefined;
  const s = v.trim().toLowerCase();
  const rate = /^(\d+(?:\.\d+)?)\s*\/\s*(\d*)\s*([a-z]+)$/.exec(s);
  if (rate) {
    const unit = UNIT[rate[3] as string];
    return unit === undefined ? undefined : Number(rate[1]) / (Number(rate[2] || 1) * unit);
  }
  const size = /^(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)$/.exec(s);
  if (size) return Number(size[1]) * (BYTES[size[2] as string] as number);
  const time = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)$/.exec(s);
  if (time) return Number(time[1]) * (time[2] === 'ms' ? 0.001 : (UNIT[time[2] as string] as number));
  const iso = ISO.exec(v.trim());
  if (iso) return (+(iso[1] ?? 0) * 24 + +(iso[2] ?? 0)) * 3600 + +(iso[3] ?? 0) * 60 + +(iso[4] ?? 0);
  return undefined;
};

/** Part 8: every limit compared as a number where more is looser; a new limit is lower than none. */
export const diffLimits = (d: DiffCollector, o: unknown, n: unknown, path: PathSegment[] = ['limits']) => {
  d.claim(path);
  if (same(o, n)) return;
  if (isRec(o) && isRec(n)) {
    for (const k of new Set([...Object.keys(o), ...Object.keys(n)])) diffLimits(d, o[k], n[k], [...path, k]);
    return;
  }
  const label = path.slice(1).join(' ');
  if (n === undefined) return d.add('limit-raised', 'old', path, `limit ${label} removed`);
  if (o === undefined) return d.add('limit-lowered', 'new', path, `limit ${label} added`);
  const [x, y] = [limitSize(o), limitSize(n)];
  if (x === undefined || y === undefined)
    return d.add('other-change', 'new', path, `limit ${label}: ${JSON.stringify(o)} → ${JSON.stringify(n)}`);
  d.add(y < x ? 'limit-lowered' : 'limit-raised', 'new', path, `limit ${label}: ${String(o)} → ${String(n)}`);
};

/** Part 9: versions removed or rewritten, the scheme, the default and sunsets. */
export const diffVersioning = (d: DiffCollector, o: unknown, n: unknown) => {
  const a = recOf(o);
  const b = recOf(n);
  d.claim(['versioning']);
  const ids = (v: Record<string, unknown>) => listOf(v.versions).map((x) => String(recOf(x).id));
  const [ia, ib] = [ids(a), ids(b)];
  for (const [i, id] of ia.entries())
    if (!ib.includes(id)) d.add('version-removed', 'old', ['versioning', 'versions', i], `API version ${id} removed`);
  for (const [i, id] of ib.entries()) {
    const path = ['versioning', 'versions', i];
    if (!ia.includes(id)) {
      d.add('version-added', 'new', path, `API version ${id} added`);
      continue;
    }
    const before = recOf(listOf(a.versions)[ia.indexOf(id)]);
    if (!same(before.changes, recOf(listOf(b.versions)[i]).changes))
      d.add('version-rewritten', 'new', [...path, 'changes'], `API version ${id}: its changes were edited`);
  }
  if (o === undefined || n === undefined) return;
  for (const key of ['scheme', 'name', 'default'])
    if (!same(a[key], b[key])) d.add('versioning-changed', 'new', ['versioning', key], `versioning ${key} changed`);
  eachKey(a.deprecated, b.deprecated, {
    removed: (k) => d.add('version-added', 'old', ['versioning', 'deprecated', k], `${k} no longer deprecated`),
    added: (k) => d.add('version-added', 'new', ['versioning', 'deprecated', k], `${k} deprecated`),
    both: (k) => {
      const x = recOf(recOf(a.deprecated)[k]);
      const y = recOf(recOf(b.deprecated)[k]);
      if (same(x, y)) return;
      // A sunset set is an announcement; one moved earlier takes back time callers were given.
      const earlier = typeof y.sunset === 'string' && typeof x.sunset === 'string' && y.sunset < x.sunset;
      const path = ['versioning', 'deprecated', k];
      d.add(earlier ? 'versioning-changed' : 'version-added', 'new', path, `${k}: sunset ${x.sunset} → ${y.sunset}`);
    },
  });
};
