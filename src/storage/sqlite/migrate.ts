import type { Database } from 'better-sqlite3';
import type { FieldType } from '../../parts/resources/field-schema.ts';
import { snakeCase } from '../../parts/resources/naming.ts';
import type { Plan, ResourcePlan } from '../../plan/types.ts';
import { type MigrationReport, StoreError } from '../store.ts';
import { quote, tableColumns } from './columns.ts';

/** Type changes that keep every stored value valid. Anything else narrows and is refused. */
const WIDENINGS: ReadonlySet<string> = new Set([
  'integer>number',
  'integer>decimal',
  'enum>string',
  'date>string',
  'datetime>string',
  'ref>string',
  'string>json',
  'integer>json',
  'number>json',
  'boolean>json',
  'object>json',
  'array>json',
]);

const META = '_ninefold_fields';

const countNonNull = (db: Database, table: string, column: string): number =>
  (db.prepare(`SELECT count(*) AS n FROM ${quote(table)} WHERE ${quote(column)} IS NOT NULL`).get() as { n: number }).n;

const indexStatements = (resource: ResourcePlan): string[] => {
  const t = resource.table;
  // No index on created_at: ids are ULIDs, so creation order is id order, the table's own order.
  const out: string[] = [];
  for (const field of resource.fields) {
    const filterable =
      resource.list.filter.includes(field.name) || resource.list.sort.includes(field.name) || field.ref;
    if (field.unique) {
      out.push(
        `CREATE UNIQUE INDEX IF NOT EXISTS ${quote(`${t}__${field.column}__unique`)} ON ${quote(t)} (${quote(field.column)})`,
      );
    } else if (filterable) {
      out.push(
        `CREATE INDEX IF NOT EXISTS ${quote(`${t}__${field.column}`)} ON ${quote(t)} (${quote(field.column)}, id)`,
      );
    }
  }
  for (const index of resource.indexes) {
    const columns = index.fields.map((f) => resource.fieldsByName.get(f)?.column ?? f);
    const name = index.name ?? `${t}__${columns.join('_')}`;
    out.push(
      `CREATE ${index.unique ? 'UNIQUE ' : ''}INDEX IF NOT EXISTS ${quote(name)} ON ${quote(t)} (${columns.map(quote).join(', ')})`,
    );
  }
  return out;
};

/**
 * Brings the database in line with the plan in one transaction. Additive changes apply themselves; a dropped
 * field that still holds data, or a narrowed type, is refused with a message saying what would be lost.
 */
export const migrateSqlite = (db: Database, plan: Plan, allowDataLoss: boolean): MigrationReport => {
  const report = { created: [] as string[], added: [] as string[], dropped: [] as string[] };
  db.exec(
    `CREATE TABLE IF NOT EXISTS ${META} (resource TEXT NOT NULL, field TEXT NOT NULL, type TEXT NOT NULL, PRIMARY KEY (resource, field))`,
  );
  const known = db.prepare(`SELECT field, type FROM ${META} WHERE resource = ?`);
  const setMeta = db.prepare(`INSERT OR REPLACE INTO ${META} (resource, field, type) VALUES (?, ?, ?)`);
  const dropMeta = db.prepare(`DELETE FROM ${META} WHERE resource = ? AND field = ?`);
  const problems: string[] = [];

  const apply = db.transaction(() => {
    for (const resource of plan.resources) {
      const table = resource.table;
      const existing = db.prepare(`PRAGMA table_info(${quote(table)})`).all() as Array<{ name: string }>;
      const columns = tableColumns(resource);
      if (existing.length === 0) {
        const defs = columns.map((c) => `${quote(c.name)} ${c.type}${c.name === 'id' ? ' PRIMARY KEY' : ''}`);
        // WITHOUT ROWID: the table is one b-tree keyed by the id, so a read by id and a scan in id order touch
        // one tree, and an insert updates one b-tree fewer.
        db.exec(`CREATE TABLE ${quote(table)} (${defs.join(', ')}) STRICT, WITHOUT ROWID`);
        report.created.push(resource.name);
      } else {
        const have = new Set(existing.map((c) => c.name));
        const stored = new Map(
          (known.all(resource.name) as Array<{ field: string; type: FieldType }>).map((r) => [r.field, r.type]),
        );
        for (const c of columns) {
          if (!c.field) continue;
          const before = stored.get(c.field.name);
          if (!have.has(c.name)) {
            db.exec(`ALTER TABLE ${quote(table)} ADD COLUMN ${quote(c.name)} ${c.type}`);
            report.added.push(`${resource.name}.${c.field.name}`);
          } else if (before && before !== c.field.type && !WIDENINGS.has(`${before}>${c.field.type}`)) {
            const n = countNonNull(db, table, c.name);
            if (n > 0) {
              problems.push(
                `${resource.name}.${c.field.name} changes type from ${before} to ${c.field.type}; ${n} stored value(s) may not fit the new type`,
              );
            }
          }
        }
        const wanted = new Set(columns.map((c) => c.name));
        for (const [field] of stored) {
          const column = existing.find((c) => c.name === snakeCase(field))?.name;
          if (!column || wanted.has(column)) continue;
          const n = countNonNull(db, table, column);
          if (n > 0 && !allowDataLoss) {
            problems.push(
              `${resource.name}.${field} was removed from the spec; ${n} record(s) still hold a value for it`,
            );
            continue;
          }
          for (const index of db.prepare(`PRAGMA index_list(${quote(table)})`).all() as Array<{ name: string }>) {
            const cols = db.prepare(`PRAGMA index_info(${quote(index.name)})`).all() as Array<{ name: string }>;
            if (cols.some((c) => c.name === column)) db.exec(`DROP INDEX ${quote(index.name)}`);
          }
          db.exec(`ALTER TABLE ${quote(table)} DROP COLUMN ${quote(column)}`);
          dropMeta.run(resource.name, field);
          report.dropped.push(`${resource.name}.${field}`);
        }
      }
      if (problems.length > 0) continue;
      for (const c of columns) if (c.field) setMeta.run(resource.name, c.field.name, c.field.type);
      for (const statement of indexStatements(resource)) db.exec(statement);
    }
    if (problems.length > 0) {
      throw new StoreError(
        'migration-refused',
        [
          'The spec change would lose or corrupt stored data, so nothing was changed:',
          ...problems.map((p) => `  - ${p}`),
          'Keep the field in the spec, or start with --allow-data-loss to apply the change and drop the data.',
        ].join('\n'),
      );
    }
  });
  apply.immediate();
  return report;
};
