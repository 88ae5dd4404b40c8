import { type CheckContext, isRecord, recordEntries } from '../../spec/check-context.ts';
import type { PathSegment } from '../../spec/source-map.ts';
import { suggestion } from '../../spec/validate-shape.ts';
import type { Raw } from '../resources/lookup.ts';
import { isIsoDate } from '../resources/value-problem.ts';
import { checkChanges } from './check-changes.ts';

/** Semantic checks of part: versioning. */
export const checkVersioning = (ctx: CheckContext): void => {
  const versioning = isRecord(ctx.spec.versioning) ? ctx.spec.versioning : undefined;
  if (!versioning) return;
  const versions: unknown[] = Array.isArray(versioning.versions) ? versioning.versions : [];
  const ids: string[] = [];
  for (const [i, version] of versions.entries()) {
    if (!isRecord(version) || typeof version.id !== 'string') continue;
    if (ids.includes(version.id))
      ctx.report('duplicate-version', ['versioning', 'versions', i, 'id'], `version "${version.id}" is declared twice`);
    ids.push(version.id);
  }
  const unknown = (id: string, path: PathSegment[], at: 'key' | 'value') => {
    if (!ids.includes(id)) ctx.report('unknown-version', path, `no version "${id}"${suggestion(id, ids)}`, at);
  };
  if (typeof versioning.default === 'string') unknown(versioning.default, ['versioning', 'default'], 'value');
  for (const [id, dates] of recordEntries<Raw>(versioning.deprecated)) {
    const path: PathSegment[] = ['versioning', 'deprecated', id];
    unknown(id, path, 'key');
    checkDates(ctx, dates, path);
  }
  checkChanges(ctx, versions);
};

const checkDates = (ctx: CheckContext, dates: Raw, path: PathSegment[]) => {
  for (const key of ['deprecation', 'sunset']) {
    const date = dates[key];
    if (typeof date === 'string' && !isIsoDate(date))
      ctx.report('invalid-date', [...path, key], `"${date}" is not a date written YYYY-MM-DD`);
  }
  const { deprecation, sunset } = dates;
  if (isIsoDate(deprecation) && isIsoDate(sunset) && sunset < deprecation)
    ctx.report(
      'sunset-before-deprecation',
      [...path, 'sunset'],
      `sunset ${sunset} is before deprecation ${deprecation}`,
    );
};
