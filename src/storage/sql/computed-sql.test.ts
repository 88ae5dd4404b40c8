import { describe, expect, it } from 'vitest';
import { computedColumns } from '../../parts/resources/computed-runtime.ts';
import { buildPlan } from '../../plan/build-plan.ts';
import { checkSource } from '../../spec/check.ts';
import { parseSpecText } from '../../spec/load.ts';
import { postgresDialect } from '../postgres/postgres-dialect.ts';
import { sqliteDialect } from '../sqlite/sqlite-dialect.ts';
import { buildComputedSql, computedShapeKey } from './computed-sql.ts';

const SPEC = `
ninefold: 1
service: { name: probes }
resources:
  Repo:
    fields:
      name: { type: string, required: true }
    computed:
      starred: { type: boolean, cel: "exists(Star, s, s.repo == record.id && s.user == caller)" }
      myStars: { type: integer, cel: "count(Star, s, s.repo == record.id && s.user == caller)" }
      watching: { type: boolean, cel: "exists(Watch, w, w.user == caller && w.repo == record.id)" }
      myWatches: { type: integer, cel: "count(Watch, w, w.repo == record.id && w.user == caller)" }
      watchersBesidesMe: { type: integer, cel: "count(Watch, w, w.repo == record.id && w.user != caller)" }
  Star:
    fields:
      repo: { type: ref, to: Repo, required: true }
      user: { type: string, required: true }
  Watch:
    fields:
      repo: { type: ref, to: Repo, required: true }
      user: { type: string, required: true }
    indexes: [{ fields: [repo, user], unique: true }]
auth:
  schemes: { key: { type: apiKey, in: header, name: X-Api-Key } }
  require: [key]
endpoints:
  Repo: { operations: [list] }
`;

describe('computed columns in a list query', () => {
  const checked = checkSource({ ...parseSpecText(SPEC, 'inline.yaml'), dir: process.cwd() });
  if (!checked.spec) throw new Error('the spec does not check');
  const plan = buildPlan(checked.spec, process.cwd());
  const repo = plan.resourcesByName.get('Repo');
  if (!repo) throw new Error('no Repo');
  const resourceOf = (name: string) => plan.resourcesByName.get(name) ?? repo;

  it('probes once per row for an exists and the counts a unique index allows one record of', () => {
    const columns = computedColumns(repo.computed, { subject: 'ann', roles: [] } as never);
    for (const dialect of [sqliteDialect, postgresDialect]) {
      const sql = buildComputedSql(dialect, repo, columns, resourceOf);
      // Stars are not unique per user: the count is a subquery of its own. A user watches a repo once at most.
      expect(sql.select.match(/FROM "star"/g)).toHaveLength(2);
      expect(sql.select.match(/FROM "watch"/g)).toHaveLength(1);
      expect(sql.params(columns)).toEqual(['ann', 'ann', 'ann']);
    }
  });

  it('keys apart the callers whose values differ between the two', () => {
    const ann = computedColumns(repo.computed, { subject: 'ann', roles: [] } as never);
    const anonymous = computedColumns(repo.computed, undefined);
    expect(computedShapeKey(ann)).not.toEqual(computedShapeKey(anonymous));
    expect(computedShapeKey(ann)).toContain('=2');
  });
});
