import { type CheckContext, isRecord } from '../../spec/check-context.ts';
import type { PathSegment } from '../../spec/source-map.ts';
import { suggestion } from '../../spec/validate-shape.ts';
import { BUILT_IN_ERRORS } from '../errors/catalogue.ts';
import { DIFF_RULES } from './diff/diff-rules.ts';
import { findOperation } from './operation-name.ts';

type Raw = Record<string, unknown>;

/**
 * The changes not about fields: an operation (`Customer.delete`, `POST /customers/{id}/archive`) or event type the
 * spec declares, an error code of the catalogue, and `covers` naming diff rules. An operation or event removed in
 * a version stays in the spec: the engine keeps serving it to older versions.
 */
export const checkRouteChanges = (ctx: CheckContext, change: Raw, path: PathSegment[], events: readonly string[]) => {
  for (const kind of ['add-operation', 'remove-operation']) {
    const named = change[kind];
    if (typeof named === 'string' && !findOperation(ctx.spec, named))
      ctx.report(
        'unknown-change-target',
        [...path, kind],
        `no operation "${named}": write Resource.operation (Customer.delete) or METHOD /path of a declared route`,
      );
  }
  for (const kind of ['add-event', 'remove-event']) {
    const type = change[kind];
    if (typeof type === 'string' && !events.includes(type))
      ctx.report('unknown-change-target', [...path, kind], `no event type "${type}"${suggestion(type, [...events])}`);
  }
  const error = isRecord(change.error) ? change.error : undefined;
  if (error && typeof error.code === 'string') {
    const codes = [...Object.keys(BUILT_IN_ERRORS), ...Object.keys(catalogueOf(ctx))];
    if (!codes.includes(error.code))
      ctx.report(
        'unknown-change-target',
        [...path, 'error', 'code'],
        `no error code "${error.code}"${suggestion(error.code, codes)}`,
      );
    const was = isRecord(error.was) ? error.was : {};
    if (was.code === undefined && was.status === undefined)
      ctx.report('invalid-change', [...path, 'error', 'was'], 'was names the old code, the old status, or both');
  }
  if (Array.isArray(change.covers))
    for (const [i, rule] of change.covers.entries())
      if (typeof rule === 'string' && !(rule in DIFF_RULES))
        ctx.report(
          'invalid-change',
          [...path, 'covers', i],
          `no diff rule "${rule}"${suggestion(rule, Object.keys(DIFF_RULES))}`,
        );
};

const catalogueOf = (ctx: CheckContext): Raw => {
  const errors = ctx.spec.errors as unknown;
  return isRecord(errors) && isRecord(errors.catalogue) ? errors.catalogue : {};
};
