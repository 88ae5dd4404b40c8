import { type CheckContext, isRecord, recordEntries } from '../../spec/check-context.ts';
import type { PathSegment } from '../../spec/source-map.ts';
import { compileComputed, isComputedProblem } from '../resources/computed-cel.ts';
import { computedScope } from '../resources/computed-scope.ts';
import { fieldMap, type Raw, resourceMap } from '../resources/lookup.ts';
import { isListParamProblem, resolveListParam } from './list-params-plan.ts';
import { distinctField } from './named-lists-plan.ts';
import { keyArity, keyModel } from './path-binding.ts';
import type { ListParamSpec } from './relation-schema.ts';

const paramsOf = (path: string): string[] => [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] ?? '');

/** Declared list parameters: each must reach a field through references or a join, and compare in SQL. */
const checkListParams = (ctx: CheckContext, name: string, list: unknown, base: PathSegment[]) => {
  if (!isRecord(list)) return;
  for (const [param, p] of recordEntries<Raw>(list.params)) {
    if (typeof p.field !== 'string') continue;
    const resolved = resolveListParam(ctx.spec, name, param, p as unknown as ListParamSpec);
    if (!isListParamProblem(resolved)) continue;
    const code = resolved.kind === 'unknown' ? 'unknown-list-param-path' : 'list-param-not-sql';
    ctx.report(code, [...base, 'params', param, resolved.at], `?${param}: ${resolved.message}`);
  }
};

/** Named lists: a CEL filter that compiles to one exists(...) subquery, a distinct field the resource has. */
const checkNamedLists = (ctx: CheckContext, name: string, resource: Raw, lists: unknown, base: PathSegment[]) => {
  for (const [listName, l] of recordEntries<Raw>(lists)) {
    const at = [...base, listName];
    if (typeof l.path === 'string' && paramsOf(l.path).length)
      ctx.report('invalid-named-list', [...at, 'path'], 'a named list path takes no parameters (not yet)');
    if (l.filter === undefined && l.distinct === undefined)
      ctx.report('invalid-named-list', at, 'a named list needs a filter (CEL), a distinct field, or both', 'key');
    if (typeof l.filter === 'string') {
      const compiled = compileComputed(l.filter, name, 'boolean', computedScope(ctx.spec));
      if (isComputedProblem(compiled))
        ctx.report('list-filter-not-sql', [...at, 'filter'], `${name}.${listName}: ${compiled.reason}`, {
          offset: compiled.offset ?? 0,
        });
    }
    if (typeof l.distinct === 'string') {
      const field = fieldMap(resource).get(l.distinct);
      if (!field || !distinctField(ctx.spec, name, l.distinct) || ['object', 'json'].includes(String(field.type)))
        ctx.report(
          'invalid-named-list',
          [...at, 'distinct'],
          `${name} has no field "${l.distinct}" whose distinct values can be listed (a scalar, or an array of scalars)`,
        );
    } else if (l.counts !== undefined || l.items !== undefined)
      ctx.report(
        'invalid-named-list',
        [...at, l.counts !== undefined ? 'counts' : 'items'],
        'only a distinct list takes this',
      );
  }
};

/** A relation: caller and target are references of the join resource, and the path names the target by its key. */
const checkRelation = (ctx: CheckContext, name: string, resource: Raw, relation: unknown, base: PathSegment[]) => {
  if (!isRecord(relation)) return;
  const fields = fieldMap(resource);
  const refOf = (role: 'caller' | 'target') => {
    const field = relation[role];
    if (typeof field !== 'string') return undefined;
    const f = fields.get(field);
    if (f?.type !== 'ref' || typeof f.to !== 'string') {
      ctx.report(
        'relation-not-join',
        [...base, role],
        `${name}.${field} is not a reference field: a relation joins the caller and a target through two references`,
      );
      return undefined;
    }
    return f.to;
  };
  refOf('caller');
  const target = refOf('target');
  if (relation.caller === relation.target && typeof relation.caller === 'string')
    ctx.report('relation-not-join', [...base, 'target'], 'caller and target must be two different reference fields');
  if (target && typeof relation.path === 'string') {
    const arity = keyArity(keyModel(ctx.spec), target);
    const given = paramsOf(relation.path).length;
    if (given !== arity)
      ctx.report(
        'relation-path-params',
        [...base, 'path'],
        `the path has ${given} parameter(s), and a ${target} is named by ${arity} (its key, or its id)`,
      );
  }
  if (target && typeof relation.view === 'string') {
    const views = resourceMap(ctx.spec).get(target)?.views;
    if (!isRecord(views) || !(relation.view in views))
      ctx.report('unknown-view', [...base, 'view'], `${target} has no view "${relation.view}"`);
  }
  if (relation.answer === 'none' && (relation.view !== undefined || relation.envelope !== undefined))
    ctx.report('relation-not-join', [...base, 'answer'], 'answer: none sends no body: view and envelope do nothing');
  const pair = [relation.caller, relation.target].filter((f): f is string => typeof f === 'string');
  const uniques = [
    ...(Array.isArray(resource.unique) ? resource.unique : []),
    ...(Array.isArray(resource.indexes)
      ? resource.indexes.filter((i) => isRecord(i) && i.unique === true).map((i) => (i as Raw).fields)
      : []),
  ];
  const covered = uniques.some((u) => Array.isArray(u) && u.length === pair.length && pair.every((f) => u.includes(f)));
  if (pair.length === 2 && !covered)
    ctx.report(
      'relation-not-unique',
      [...base, 'target'],
      `declare unique: [[${pair.join(', ')}]] on ${name}: without it two concurrent adds may store the pair twice`,
    );
};

/** The relational parts of a resource's endpoints entry: list params, named lists, the relation. */
export const checkRelations = (ctx: CheckContext, name: string, resource: Raw, entry: Raw) => {
  checkListParams(ctx, name, entry.list, ['endpoints', name, 'list']);
  checkNamedLists(ctx, name, resource, entry.lists, ['endpoints', name, 'lists']);
  checkRelation(ctx, name, resource, entry.relation, ['endpoints', name, 'relation']);
};
