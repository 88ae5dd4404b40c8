import { type CheckContext, isRecord } from '../../spec/check-context.ts';
import type { PathSegment } from '../../spec/source-map.ts';
import { fieldMap, type Raw, resourceMap } from '../resources/lookup.ts';
import { endpointEntry } from './routes.ts';
import { type Naming, wireName } from './wire-names.ts';
import { mergedWire } from './wire-plan.ts';
import type { WireSpec } from './wire-schema.ts';

const SYSTEM_FIELDS = ['id', 'createdAt', 'updatedAt'];

/** Which paging members each style fills. */
const MEMBER_STYLES: Readonly<Record<'next' | 'total' | 'hasMore', readonly string[]>> = {
  next: ['cursor'],
  total: ['cursor', 'offset', 'page'],
  hasMore: ['starting_after'],
};

/** Where a wire setting is written: the resource's own `wire` when it gives it, else the service's. */
const whereIs = (own: Raw | undefined, name: string, path: string[]): PathSegment[] => {
  let at: unknown = own;
  for (const key of path) at = isRecord(at) ? at[key] : undefined;
  return at !== undefined ? ['endpoints', name, 'wire', ...path] : ['endpoints', 'wire', ...path];
};

/**
 * The wire of every resource, service-wide settings laid under its own: names the wire gives two fields at once, an
 * `object` member over a field, list members that clash or that the paging style never fills, a bare-array list
 * with members, templates other than {path}, and an envelope named like a field.
 */
export const checkWire = (checking: CheckContext): void => {
  // A service-wide setting is checked with each resource: reported once.
  const reported = new Set<string>();
  const ctx = {
    report: (...args: Parameters<CheckContext['report']>) => {
      const key = JSON.stringify(args.slice(0, 3));
      if (reported.has(key)) return;
      reported.add(key);
      checking.report(...args);
    },
  } as CheckContext;
  const endpoints = isRecord(checking.spec.endpoints) ? checking.spec.endpoints : {};
  const service = isRecord(endpoints.wire) ? (endpoints.wire as WireSpec) : undefined;
  for (const [name, resource] of resourceMap(checking.spec)) {
    const entry = endpointEntry(checking.spec, name);
    const own = isRecord(entry?.wire) ? (entry.wire as Raw) : undefined;
    if (!service && !own && resource.object === undefined) continue;
    const wire = mergedWire(service, own as WireSpec | undefined);
    const naming: Naming = wire.naming === 'snake_case' ? 'snake_case' : 'camelCase';
    checkNames(ctx, name, resource, naming);
    checkList(ctx, name, wire, own);
    const fields = new Set([...SYSTEM_FIELDS, ...fieldMap(resource).keys()].map((f) => wireName(naming, f)));
    if (typeof wire.envelope === 'string' && fields.has(wire.envelope))
      ctx.report(
        'envelope-names-field',
        whereIs(own, name, ['envelope']),
        `the envelope "${wire.envelope}" is also a field of ${name}: {"${wire.envelope}": {"${wire.envelope}": …}} reads as a mistake`,
      );
  }
};

/** Two fields, or a field and the `object` member, that would travel under one name. */
const checkNames = (ctx: CheckContext, name: string, resource: Raw, naming: Naming) => {
  const seen = new Map<string, string>();
  const walk = (fields: Map<string, Raw>, base: PathSegment[], system: boolean) => {
    seen.clear();
    for (const field of [...(system ? SYSTEM_FIELDS : []), ...fields.keys()]) {
      const wire = wireName(naming, field);
      const first = seen.get(wire);
      if (first !== undefined && first !== field)
        ctx.report(
          'wire-name-clash',
          [...base, field],
          `${first} and ${field} are both "${wire}" on the wire (naming: ${naming})`,
          'key',
        );
      seen.set(wire, field);
    }
    if (system && typeof resource.object === 'string' && seen.has('object'))
      ctx.report(
        'wire-name-clash',
        ['resources', name, 'object'],
        `${name} has a field "object": the constant object member would hide it`,
      );
    const inner: Array<[Map<string, Raw>, PathSegment[]]> = [];
    for (const [field, spec] of fields) {
      let at: unknown = spec;
      const path: PathSegment[] = [...base, field];
      while (isRecord(at) && at.type === 'array') {
        at = at.items;
        path.push('items');
      }
      if (isRecord(at) && at.type === 'object' && isRecord(at.fields))
        inner.push([fieldMap({ fields: at.fields }), [...path, 'fields']]);
    }
    for (const [nested, path] of inner) walk(nested, path, false);
  };
  if (naming === 'snake_case' || typeof resource.object === 'string')
    walk(fieldMap(resource), ['resources', name, 'fields'], true);
};

const checkList = (ctx: CheckContext, name: string, wire: WireSpec, own: Raw | undefined) => {
  const paging = wire.paging ?? 'cursor';
  const list = wire.list ?? {};
  for (const member of ['next', 'total', 'hasMore'] as const) {
    const value = list[member];
    if (typeof value === 'string' && !MEMBER_STYLES[member].includes(paging))
      ctx.report(
        'paging-member-unused',
        whereIs(own, name, ['list', member]),
        `${member} "${value}" is never filled: ${paging} paging gives ${member === 'total' ? 'no total' : `no ${member}`} (only ${MEMBER_STYLES[member].join(', ')})`,
      );
  }
  const extras = isRecord(list.extras) ? Object.entries(list.extras) : [];
  if (list.items === null) {
    const members = [
      ...(['total', 'hasMore'] as const).filter((m) => typeof list[m] === 'string'),
      ...(paging === 'cursor' && list.next !== null ? ['next'] : []),
      ...(extras.length ? ['extras'] : []),
    ];
    if (members.length)
      ctx.report(
        'bare-list-members',
        whereIs(own, name, ['list', 'items']),
        `a list answered as a bare array has nowhere to put ${members.join(', ')}${paging === 'cursor' ? ' (use page or offset paging, or name next: null)' : ''}`,
      );
  }
  const names = new Map<string, string>();
  const add = (member: string, value: unknown) => {
    if (typeof value !== 'string') return;
    const first = names.get(value);
    if (first !== undefined)
      ctx.report(
        'list-member-clash',
        whereIs(own, name, ['list', member]),
        `${member} and ${first} are both "${value}"`,
      );
    names.set(value, member);
  };
  add('items', list.items ?? 'data');
  if (paging === 'cursor') add('next', list.next === undefined ? 'nextCursor' : list.next);
  add('total', list.total);
  if (paging === 'starting_after') add('hasMore', list.hasMore === undefined ? 'has_more' : list.hasMore);
  for (const [extra, value] of extras) {
    add(`extras.${extra}`, extra);
    const unknown =
      typeof value === 'string' ? [...value.matchAll(/\{([^}]*)\}/g)].find((m) => m[1] !== 'path') : undefined;
    if (unknown)
      ctx.report(
        'unknown-list-template',
        whereIs(own, name, ['list', 'extras', extra]),
        `{${unknown[1]}} is not a template variable of a list member (only {path})`,
      );
  }
};
