import type { PathSegment } from '../../../spec/source-map.ts';
import { type DiffCollector, diffRoles, eachKey, isRec, listChange, listOf, recOf, same } from './diff-collector.ts';
import { diffFields } from './diff-fields.ts';

const diffList = (
  d: DiffCollector,
  o: unknown,
  n: unknown,
  path: PathSegment[],
  label: string,
  renames: ReadonlyMap<string, string>,
) => {
  const a = recOf(o);
  const b = recOf(n);
  d.claim(path);
  // A field renamed by a new version keeps its filter and sort under the old name in the old version.
  const now = new Map([...renames].map(([to, from]) => [from, to]));
  const renamed = (v: unknown) => listOf(v).map((x) => now.get(String(x)) ?? String(x));
  for (const key of ['filter', 'sort', 'expand']) {
    const { gone, added } = listChange(renamed(a[key]), b[key]);
    if (gone.length) d.add('list-option-removed', 'new', [...path, key], `${label} ${key}: ${gone.join(', ')} removed`);
    if (added.length) d.add('list-option-added', 'new', [...path, key], `${label} ${key}: ${added.join(', ')} added`);
  }
  if (a.defaultSort !== b.defaultSort) d.add('behaviour-changed', 'new', [...path, 'defaultSort'], `${label} order`);
  const pa = recOf(a.pageSize);
  const pb = recOf(b.pageSize);
  if (pa.default !== pb.default)
    d.add('behaviour-changed', 'new', [...path, 'pageSize'], `${label} page size ${pa.default} → ${pb.default}`);
  if (pa.max !== pb.max) {
    const lower = pb.max !== undefined && (pa.max === undefined || (pb.max as number) < (pa.max as number));
    d.add(lower ? 'limit-lowered' : 'limit-raised', 'new', [...path, 'pageSize'], `${label} largest page`);
  }
};

const diffCustom = (d: DiffCollector, o: unknown, n: unknown, path: PathSegment[], name: string) => {
  const a = recOf(o);
  const b = recOf(n);
  d.claim(path);
  const at = (...k: PathSegment[]) => [...path, ...k];
  if (a.method !== b.method || a.path !== b.path)
    d.add('path-changed', 'new', at('path'), `${name}: ${a.method} ${a.path} → ${b.method} ${b.path}`);
  for (const part of ['params', 'query', 'body'])
    diffFields(d, recOf(a.request)[part], recOf(b.request)[part], at('request', part), `${name} ${part}`, 'in');
  const ra = recOf(a.response);
  const rb = recOf(b.response);
  if ((ra.status ?? 200) !== (rb.status ?? 200))
    d.add(
      'status-changed',
      'new',
      at('response', 'status'),
      `${name}: answers ${rb.status ?? 200} (was ${ra.status ?? 200})`,
    );
  if (!same(ra.list, rb.list)) d.add('type-changed', 'new', at('response'), `${name}: answer is a list or not`);
  diffFields(d, ra.fields, rb.fields, at('response', 'fields'), `${name} answer`, 'out');
  diffRoles(d, a.roles, b.roles, at('roles'), `${name}`);
  if (!same(a.require, b.require)) d.add('auth-changed', 'new', at('require'), `${name}: required auth changed`);
  const errors = listChange(a.errors, b.errors);
  if (errors.gone.length || errors.added.length) d.add('error-added', 'new', at('errors'), `${name}: error codes`);
  if (a.summary !== b.summary || a.handler !== b.handler)
    d.add('docs-changed', 'new', path, `${name}: summary or handler changed`);
  for (const key of Object.keys({ ...a, ...b }))
    if (
      !['method', 'path', 'request', 'response', 'roles', 'require', 'errors', 'summary', 'handler', 'name'].includes(
        key,
      )
    )
      if (!same(a[key], b[key])) d.add('other-change', 'new', at(key), `${name}: ${key} changed`);
};

/** Part 4: operations, paths, list options and custom endpoints. */
export const diffEndpoints = (
  d: DiffCollector,
  o: unknown,
  n: unknown,
  renamesOf: (resource: string) => ReadonlyMap<string, string>,
) => {
  const a = recOf(o);
  const b = recOf(n);
  const named = (list: unknown) => new Map(listOf(list).map((e) => [String(recOf(e).name), e] as const));
  const ca = named(a.custom);
  const cb = named(b.custom);
  const index = (list: unknown, name: string) => listOf(list).findIndex((e) => recOf(e).name === name);
  d.claim(['endpoints', 'custom']);
  for (const [name] of ca)
    if (!cb.has(name))
      d.add(
        'endpoint-removed',
        'old',
        ['endpoints', 'custom', index(a.custom, name)],
        `custom endpoint ${name} removed`,
      );
  for (const [name, e] of cb) {
    const path = ['endpoints', 'custom', index(b.custom, name)];
    if (!ca.has(name)) d.add('operation-added', 'new', path, `custom endpoint ${name} added`);
    else diffCustom(d, ca.get(name), e, path, name);
  }
  eachKey(a, b, {
    removed: (k) => {
      if (k !== 'custom') d.add('operation-removed', 'old', ['endpoints', k], `${k}: every operation removed`);
    },
    added: (k) => {
      if (k !== 'custom') d.add('operation-added', 'new', ['endpoints', k], `${k}: operations added`);
    },
    both: (k) => {
      if (k === 'custom') return;
      const x = recOf(a[k]);
      const y = recOf(b[k]);
      const path = ['endpoints', k];
      d.claim([...path, 'operations']);
      d.claim([...path, 'path']);
      const ops = listChange(x.operations, y.operations);
      if (ops.gone.length)
        d.add('operation-removed', 'new', [...path, 'operations'], `${k}: ${ops.gone.join(', ')} removed`);
      if (ops.added.length)
        d.add('operation-added', 'new', [...path, 'operations'], `${k}: ${ops.added.join(', ')} added`);
      if (x.path !== y.path) d.add('path-changed', 'new', [...path, 'path'], `${k}: path ${x.path} → ${y.path}`);
      diffList(d, x.list, y.list, [...path, 'list'], `${k} list`, renamesOf(k));
    },
  });
};

/** Part 5: schemes, the schemes required, roles and rules. */
export const diffAuth = (d: DiffCollector, o: unknown, n: unknown) => {
  const a = recOf(o);
  const b = recOf(n);
  d.claim(['auth', 'schemes']);
  eachKey(a.schemes, b.schemes, {
    removed: (k) => d.add('auth-changed', 'old', ['auth', 'schemes', k], `auth scheme ${k} removed`),
    added: (k) => d.add('auth-added', 'new', ['auth', 'schemes', k], `auth scheme ${k} added`),
    both: (k) => {
      const { description: _x, ...x } = recOf(recOf(a.schemes)[k]);
      const { description: _y, ...y } = recOf(recOf(b.schemes)[k]);
      if (!same(x, y)) d.add('auth-changed', 'new', ['auth', 'schemes', k], `auth scheme ${k} changed`);
    },
  });
  d.claim(['auth', 'require']);
  if (!same(a.require, b.require)) {
    const anyOf = (v: unknown) => (Array.isArray(v) ? v : typeof v === 'string' ? [v] : undefined);
    const [x, y] = [anyOf(a.require), anyOf(b.require)];
    const widened = x && y && listChange(x, y).gone.length === 0;
    d.add(widened ? 'auth-added' : 'auth-changed', 'new', ['auth', 'require'], 'the schemes accepted changed');
  }
  d.claim(['auth', 'roles']);
  eachKey(a.roles, b.roles, {
    removed: (k) => d.add('roles-narrowed', 'old', ['auth', 'roles', k], `role ${k} removed`),
    added: (k) => d.add('auth-added', 'new', ['auth', 'roles', k], `role ${k} added`),
  });
  d.claim(['auth', 'rules']);
  const rules = (v: unknown) => {
    const out = new Map<string, unknown>();
    for (const [resource, r] of Object.entries(recOf(v)))
      for (const [action, rule] of Object.entries(recOf(r)))
        if (isRec(rule)) for (const [t, x] of Object.entries(rule)) out.set(`${resource}/${action}/${t}`, x);
        else out.set(`${resource}/${action}`, rule);
    return out;
  };
  const ra = rules(a.rules);
  const rb = rules(b.rules);
  for (const key of new Set([...ra.keys(), ...rb.keys()])) {
    const path = ['auth', 'rules', ...key.split('/')];
    if (!rb.has(key)) d.add('auth-rule-changed', 'old', path, `rule ${key.replaceAll('/', '.')} removed`);
    // Deny by default: a new rule only lets more through, except a transition's, which replaces the update rule.
    else if (!ra.has(key))
      d.add(
        key.includes('/transitions/') ? 'auth-rule-changed' : 'auth-added',
        'new',
        path,
        `rule ${key.replaceAll('/', '.')} added`,
      );
    else if (!same(ra.get(key), rb.get(key)))
      d.add('auth-rule-changed', 'new', path, `rule ${key.replaceAll('/', '.')} changed`);
  }
};
