import type { Database } from 'better-sqlite3';
import type { FieldType } from '../../parts/resources/field-schema.ts';
import { snakeCase } from '../../parts/resources/naming.ts';
import type { FieldPlan, Plan, ResourcePlan } from '../../plan/types.ts';
import { idStyleChanged, uniqueBrokenLine, uniqueNewLine } from '../sql/conversions.ts';
import { createIndex, type ExistingIndex, indexChanges } from '../sql/indexes.ts';
import { type MigrationReport, StoreError } from '../store.ts';
import { quote, sqliteType, tableColumns } from './columns.ts';
import { conversionFunctions, enumChange, type FieldChange, type Problem, retype } from './field-changes.ts';
import { rebuildTable } from './rebuild.ts';
import { migrateSqliteTallies } from './tallies.ts';

const META = '_ninefold_fields';

const countNonNull = (db: Database, table: string, column: string): number =>
  (db.prepare(`SELECT count(*) AS n FROM ${quote(table)} WHERE ${quote(column)} IS NOT NULL`).get() as { n: number }).n;

/** The SQLite type an older version may have left on a column whose stored type says otherwise. */
const typeOfColumn = (declared: string, stored: FieldType): FieldType => {
  if (declared === 'INTEGER' && stored !== 'boolean') return 'integer';
  if (declared === 'REAL') return 'number';
  return stored;
};

/** The changes one existing column needs to match its field. */
const changeOf = (
  db: Database,
  conversions: ReturnType<typeof conversionFunctions>,
  at: { resource: string; table: string; field: FieldPlan; stored: FieldType | undefined; declared: string },
): FieldChange | undefined => {
  const { field, declared } = at;
  // A column retyped by a version that only changed the stored type (it kept INTEGER for a number): repaired.
  const from =
    at.stored && declared !== sqliteType(field) && at.stored === field.type
      ? typeOfColumn(declared, at.stored)
      : at.stored;
  if (field.type === 'enum' && (from === undefined || from === 'enum' || from === 'string')) {
    return enumChange(db, at);
  }
  if (!from || (from === field.type && declared === sqliteType(field))) return undefined;
  return retype(db, conversions, { ...at, from });
};

const refusal = (problems: readonly Problem[]): StoreError => {
  const some = problems.some((p) => p.allowed);
  const all = problems.every((p) => p.allowed);
  return new StoreError(
    'migration-refused',
    [
      'The spec change would lose or corrupt stored data, so nothing was changed:',
      ...problems.map((p) => `  - ${p.line}`),
      some
        ? `Keep those fields as they were, or start with --allow-data-loss to apply what each line says it does.${
            all ? '' : ' The lines it cannot apply need the spec or the data changed first.'
          }`
        : 'Keep those fields as they were, or change the spec or the data as each line says: --allow-data-loss cannot apply these changes.',
    ].join('\n'),
  );
};

/** Runs a rewrite of stored values; a unique index the new values break is a problem naming the field it guards. */
const attempt = (rewrite: () => void, resource: ResourcePlan): Problem | undefined => {
  try {
    rewrite();
    return undefined;
  } catch (error) {
    const e = error as { code?: string; message?: string };
    if (e.code !== 'SQLITE_CONSTRAINT_UNIQUE') throw error;
    return uniqueBroken(e.message ?? '', resource);
  }
};

/**
 * Brings the table's indexes to the spec (sql/indexes.ts `indexChanges`): changed ones dropped and made again,
 * missing ones made, Ninefold's no longer asked for dropped. A unique index the stored values break is a problem.
 */
const reconcileIndexes = (db: Database, resource: ResourcePlan): Problem | undefined => {
  const table = quote(resource.table);
  const listed = db.prepare(`PRAGMA index_list(${table})`).all() as Array<{
    name: string;
    unique: number;
    origin: string;
  }>;
  // origin 'c': made by CREATE INDEX (not a primary key's or a constraint's).
  const existing: ExistingIndex[] = listed
    .filter((i) => i.origin === 'c')
    .map((i) => ({
      name: i.name,
      unique: i.unique === 1,
      columns: (db.prepare(`PRAGMA index_info(${quote(i.name)})`).all() as Array<{ name: string }>).map((c) => c.name),
    }));
  const { drop, create } = indexChanges(resource, existing);
  for (const name of drop) db.exec(`DROP INDEX ${quote(name)}`);
  for (const index of create) {
    try {
      db.exec(createIndex(resource.table, index));
    } catch (error) {
      if ((error as { code?: string }).code !== 'SQLITE_CONSTRAINT_UNIQUE') throw error;
      return uniqueNewLine(resource.name, index.fields);
    }
  }
  return undefined;
};

const uniqueBroken = (message: string, resource: ResourcePlan): Problem => {
  const column = /\.(\w+)/.exec(message)?.[1];
  return uniqueBrokenLine(
    resource.name,
    resource.fields.find((f) => f.column === column)?.name ?? column ?? 'a unique field',
  );
};

/**
 * Brings the database in line with the plan in one transaction. Additive changes apply themselves, and so do
 * widened types (the column is rebuilt with the new type and every value converted). A dropped field that still
 * holds data, a narrowed type whose values do not all fit, or an enum value that records still hold is refused
 * with a message naming each one; with `allowDataLoss` whatever each line says it would do is applied.
 */
export const migrateSqlite = (db: Database, plan: Plan, allowDataLoss: boolean): MigrationReport => {
  const report = { created: [] as string[], added: [] as string[], dropped: [] as string[], changed: [] as string[] };
  db.exec(
    `CREATE TABLE IF NOT EXISTS ${META} (resource TEXT NOT NULL, field TEXT NOT NULL, type TEXT NOT NULL, PRIMARY KEY (resource, field))`,
  );
  const known = db.prepare(`SELECT field, type FROM ${META} WHERE resource = ?`);
  const setMeta = db.prepare(`INSERT OR REPLACE INTO ${META} (resource, field, type) VALUES (?, ?, ?)`);
  const dropMeta = db.prepare(`DELETE FROM ${META} WHERE resource = ? AND field = ?`);
  const conversions = conversionFunctions(db);
  const problems: Problem[] = [];
  /** Refused unless --allow-data-loss applies it: then true, and the caller applies it. */
  const mayApply = (found: readonly Problem[]) => {
    const refused = found.filter((p) => !p.allowed || !allowDataLoss);
    problems.push(...refused);
    return refused.length === 0;
  };

  const apply = db.transaction(() => {
    for (const resource of plan.resources) {
      const table = resource.table;
      const existing = db.prepare(`PRAGMA table_info(${quote(table)})`).all() as Array<{ name: string; type: string }>;
      const columns = tableColumns(resource);
      if (existing.length === 0) {
        const defs = columns.map((c) => `${quote(c.name)} ${c.type}${c.name === 'id' ? ' PRIMARY KEY' : ''}`);
        // WITHOUT ROWID: the table is one b-tree keyed by the id, so a read by id and a scan in id order touch
        // one tree, and an insert updates one b-tree fewer.
        db.exec(`CREATE TABLE ${quote(table)} (${defs.join(', ')}) STRICT, WITHOUT ROWID`);
        report.created.push(resource.name);
      } else {
        const have = new Map(existing.map((c) => [c.name, c.type]));
        const idType = columns[0]?.type;
        if (have.get('id') !== idType) {
          problems.push(idStyleChanged(resource.name, resource.idStyle));
          continue;
        }
        const stored = new Map(
          (known.all(resource.name) as Array<{ field: string; type: FieldType }>).map((r) => [r.field, r.type]),
        );
        const rebuild = new Map<string, { type: string; value: string }>();
        for (const c of columns) {
          if (!c.field) continue;
          const declared = have.get(c.name);
          if (declared === undefined) {
            db.exec(`ALTER TABLE ${quote(table)} ADD COLUMN ${quote(c.name)} ${c.type}`);
            report.added.push(`${resource.name}.${c.field.name}`);
            continue;
          }
          const at = { resource: resource.name, table, field: c.field, stored: stored.get(c.field.name), declared };
          const change = changeOf(db, conversions, at);
          if (!change || !mayApply(change.problems)) continue;
          const broken = attempt(() => change.apply?.(), resource);
          if (broken) {
            problems.push(broken);
            continue;
          }
          if (change.rebuild) rebuild.set(c.name, change.rebuild);
          if (change.report && (change.apply || change.rebuild)) report.changed.push(change.report);
        }
        const wanted = new Set(columns.map((c) => c.name));
        for (const [field] of stored) {
          const column = existing.find((c) => c.name === snakeCase(field))?.name;
          if (!column || wanted.has(column)) continue;
          const n = countNonNull(db, table, column);
          const line = `${resource.name}.${field} was removed from the spec; ${n} record(s) still hold a value for it (--allow-data-loss drops it)`;
          if (n > 0 && !mayApply([{ line, allowed: true }])) continue;
          for (const index of db.prepare(`PRAGMA index_list(${quote(table)})`).all() as Array<{ name: string }>) {
            const cols = db.prepare(`PRAGMA index_info(${quote(index.name)})`).all() as Array<{ name: string }>;
            if (cols.some((c) => c.name === column)) db.exec(`DROP INDEX ${quote(index.name)}`);
          }
          db.exec(`ALTER TABLE ${quote(table)} DROP COLUMN ${quote(column)}`);
          dropMeta.run(resource.name, field);
          report.dropped.push(`${resource.name}.${field}`);
        }
        if (problems.length === 0 && rebuild.size > 0) {
          const broken = attempt(() => rebuildTable(db, table, rebuild), resource);
          if (broken) problems.push(broken);
        }
      }
      if (problems.length > 0) continue;
      for (const c of columns) if (c.field) setMeta.run(resource.name, c.field.name, c.field.type);
      const broken = reconcileIndexes(db, resource);
      if (broken) problems.push(broken);
    }
    if (problems.length > 0) throw refusal(problems);
    migrateSqliteTallies(db, plan);
  });
  apply.immediate();
  return report;
};
