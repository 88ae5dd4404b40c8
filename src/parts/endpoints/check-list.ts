import { type CheckContext, isRecord } from '../../spec/check-context.ts';
import type { PathSegment } from '../../spec/source-map.ts';
import { suggestion } from '../../spec/validate-shape.ts';
import { fieldMap, knownFieldNames, neverFilledFields, type Raw } from '../resources/lookup.ts';

/** List options: filters, sorts and expands must name fields the resource has; page sizes must fit. */
export const checkListOptions = (ctx: CheckContext, resource: Raw, list: unknown, base: PathSegment[]) => {
  if (!isRecord(list)) return;
  const known = [...knownFieldNames(resource)];
  const refs = [...fieldMap(resource)].filter(([, f]) => f.type === 'ref').map(([n]) => n);
  const each = (key: string, check: (name: string, path: PathSegment[]) => void) => {
    if (Array.isArray(list[key]))
      for (const [i, name] of list[key].entries()) if (typeof name === 'string') check(name, [...base, key, i]);
  };
  const unfilled = neverFilledFields(resource);
  const neverFilled = (verb: string, name: string, path: PathSegment[]) =>
    ctx.report(
      'never-filled-field',
      path,
      `cannot ${verb} "${name}": it is read-only and nothing fills it (no default, no transition input of that name), so it never holds a value`,
    );
  each('filter', (name, path) => {
    if (!known.includes(name))
      ctx.report('unknown-filter-field', path, `cannot filter on "${name}": no such field${suggestion(name, known)}`);
    else if (unfilled.has(name)) neverFilled('filter on', name, path);
  });
  const sortable = (name: string, path: PathSegment[]) => {
    const field = name.replace(/^[-+]/, '');
    if (!known.includes(field))
      ctx.report('unknown-sort-field', path, `cannot sort on "${field}": no such field${suggestion(field, known)}`);
    else if (unfilled.has(field)) neverFilled('sort on', field, path);
  };
  each('sort', sortable);
  if (typeof list.defaultSort === 'string')
    for (const key of list.defaultSort.split(',')) if (key.trim()) sortable(key.trim(), [...base, 'defaultSort']);
  each('expand', (name, path) => {
    if (!refs.includes(name))
      ctx.report('unknown-expand-field', path, `"${name}" is not a reference field${suggestion(name, refs)}`);
  });
  const pageSize = isRecord(list.pageSize) ? list.pageSize : {};
  if (typeof pageSize.default === 'number' && typeof pageSize.max === 'number' && pageSize.default > pageSize.max)
    ctx.report(
      'invalid-page-size',
      [...base, 'pageSize', 'default'],
      `the default page size ${pageSize.default} is above the maximum ${pageSize.max}`,
    );
};
