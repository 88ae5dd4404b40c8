import type pg from 'pg';
import type { FieldType } from '../../parts/resources/field-schema.ts';
import { snakeCase } from '../../parts/resources/naming.ts';
import type { FieldPlan, Plan, ResourcePlan } from '../../plan/types.ts';
import {
  conversionOf,
  enumOutcome,
  idStyleChanged,
  lossProblems,
  type Problem,
  retypeReport,
  uniqueBrokenLine,
  uniqueNewLine,
} from '../sql/conversions.ts';
import { quote } from '../sql/dialect.ts';
import { createIndex, type ExistingIndex, indexChanges } from '../sql/indexes.ts';
import { type MigrationReport, StoreError } from '../store.ts';
import { asSqliteValue, DATA_TYPE, ddlType, pgType, tableColumns } from './columns.ts';
import { migratePostgresTallies } from './tallies.ts';

const META = '_ninefold_fields';

type Client = Pick<pg.PoolClient, 'query'>;

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

/** What one existing column needs: problems to refuse, and the change to apply when none is refused. */
interface FieldChange {
  readonly problems: readonly Problem[];
  readonly apply?: () => Promise<void>;
  readonly report?: string;
}

const now = () => new Date().toISOString();

/** Runs `work` under a savepoint: a unique index the work breaks is a problem, and the transaction lives on. */
const guarded = async (
  client: Client,
  resource: ResourcePlan,
  work: () => Promise<void>,
): Promise<Problem | undefined> => {
  await client.query('SAVEPOINT nf_change');
  try {
    await work();
    await client.query('RELEASE nf_change');
    return undefined;
  } catch (error) {
    await client.query('ROLLBACK TO nf_change');
    const e = error as { code?: string; constraint?: string };
    if (e.code !== '23505') throw error;
    const column = /__(\w+)__unique$/.exec(e.constraint ?? '')?.[1];
    return uniqueBrokenLine(
      resource.name,
      resource.fields.find((f) => f.column === column)?.name ?? column ?? 'a unique field',
    );
  }
};

/** The indexes of a table in the current schema, but those of its primary key and constraints. */
const INDEXES_OF = `SELECT i.relname AS name, x.indisunique AS unique,
  ARRAY(SELECT a.attname::text FROM unnest(x.indkey::int2[]) WITH ORDINALITY AS k(attnum, n)
        JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.attnum ORDER BY k.n) AS columns
FROM pg_index x
JOIN pg_class i ON i.oid = x.indexrelid
JOIN pg_class t ON t.oid = x.indrelid
JOIN pg_namespace s ON s.oid = t.relnamespace
WHERE s.nspname = current_schema() AND t.relname = $1
  AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)`;

/** PostgreSQL keeps the first 63 bytes of a longer name. */
const storedName = (name: string) =>
  Buffer.byteLength(name) <= 63 ? name : Buffer.from(name).subarray(0, 63).toString();

/**
 * Brings the table's indexes to the spec (sql/indexes.ts `indexChanges`), under a savepoint: a unique index the
 * stored values break is a problem, and the migration's transaction lives on to name every other one.
 */
const reconcileIndexes = async (client: Client, resource: ResourcePlan): Promise<Problem | undefined> => {
  const existing = (await client.query(INDEXES_OF, [resource.table])).rows as ExistingIndex[];
  const { drop, create } = indexChanges(resource, existing, storedName);
  await client.query('SAVEPOINT nf_indexes');
  let index: (typeof create)[number] | undefined;
  try {
    for (const name of drop) await client.query(`DROP INDEX ${quote(name)}`);
    for (index of create) await client.query(createIndex(resource.table, index));
    await client.query('RELEASE nf_indexes');
    return undefined;
  } catch (error) {
    await client.query('ROLLBACK TO nf_indexes');
    if ((error as { code?: string }).code !== '23505' || !index) throw error;
    return uniqueNewLine(resource.name, index.fields);
  }
};

/** Stored values converted in JavaScript (the shared conversions), written back in one UPDATE per column. */
const retype = async (
  client: Client,
  at: { resource: ResourcePlan; field: FieldPlan; from: FieldType; declared: string },
): Promise<FieldChange> => {
  const { resource, field, from } = at;
  const table = quote(resource.table);
  const column = quote(field.column);
  const conversion = conversionOf(from, field);
  const wanted = pgType(field);
  const name = `${resource.name}.${field.name}`;
  const rows = (await client.query(`SELECT id, ${column} AS v FROM ${table} WHERE ${column} IS NOT NULL ORDER BY id`))
    .rows as Array<{ id: string; v: unknown }>;
  const counts = new Map<string, number>();
  const lostIds = new Set<string>();
  for (const row of rows) {
    const g = conversion.loss?.(asSqliteValue(row.v));
    if (g === undefined) continue;
    counts.set(g, (counts.get(g) ?? 0) + 1);
    lostIds.add(row.id);
  }
  const groups = [...counts].sort(([a], [b]) => (a < b ? -1 : 1)).map(([g, n]) => ({ g, n }));
  const problems = lossProblems(name, from, field, conversion, groups);
  const retyped = at.declared !== DATA_TYPE[wanted];
  if (!conversion.rewrites && !retyped) return { problems };
  return {
    problems,
    report: retypeReport(name, from, field, lostIds.size),
    apply: async () => {
      await client.query(`ALTER TABLE ${table} ALTER COLUMN ${column} TYPE ${ddlType(wanted)} USING NULL`);
      const ids = rows.map((r) => r.id);
      const values = rows.map((r) => {
        const v = conversion.convert(asSqliteValue(r.v));
        return v === null || v === undefined ? null : String(v);
      });
      const touched = rows.map((r) => lostIds.has(r.id));
      await client.query(
        `UPDATE ${table} AS t SET ${column} = (c.v)::${wanted},
           revision = t.revision + CASE WHEN c.lost THEN 1 ELSE 0 END,
           updated_at = CASE WHEN c.lost THEN $4 ELSE t.updated_at END
         FROM unnest($1::text[], $2::text[], $3::boolean[]) AS c(id, v, lost) WHERE t.id = c.id`,
        [ids, values, touched, now()],
      );
    },
  };
};

/** Enum values the spec no longer allows, held by records. */
const enumChange = async (client: Client, resource: ResourcePlan, field: FieldPlan): Promise<FieldChange> => {
  const values = field.spec.values ?? [];
  const table = quote(resource.table);
  const column = quote(field.column);
  const notAllowed = `${column} IS NOT NULL AND NOT (${column} = ANY($1::text[]))`;
  const held = (
    await client.query(
      `SELECT ${column} AS v, count(*)::int AS n FROM ${table} WHERE ${notAllowed} GROUP BY ${column} ORDER BY ${column} COLLATE "C"`,
      [values],
    )
  ).rows as Array<{ v: unknown; n: number }>;
  if (held.length === 0) return { problems: [] };
  const outcome = enumOutcome(`${resource.name}.${field.name}`, field, held);
  const apply = outcome.apply;
  if (!apply) return { problems: outcome.problems };
  return {
    problems: outcome.problems,
    report: apply.report,
    apply: async () => {
      await client.query(
        `UPDATE ${table} SET ${column} = $2, revision = revision + 1, updated_at = $3 WHERE ${notAllowed}`,
        [values, apply.value, now()],
      );
    },
  };
};

/**
 * Brings the schema in line with the plan, in the caller's transaction (held under an advisory lock, so that N
 * processes starting together migrate once). The same rules as SQLite's (sqlite/migrate.ts): additive changes and
 * widenings apply themselves; a change that would lose data is refused, naming each one, unless allowDataLoss.
 */
export const migratePostgres = async (client: Client, plan: Plan, allowDataLoss: boolean): Promise<MigrationReport> => {
  const report = { created: [] as string[], added: [] as string[], dropped: [] as string[], changed: [] as string[] };
  await client.query(
    `CREATE TABLE IF NOT EXISTS ${META} (resource text NOT NULL, field text NOT NULL, type text NOT NULL, PRIMARY KEY (resource, field))`,
  );
  const problems: Problem[] = [];
  const mayApply = (found: readonly Problem[]) => {
    const refused = found.filter((p) => !p.allowed || !allowDataLoss);
    problems.push(...refused);
    return refused.length === 0;
  };
  for (const resource of plan.resources) {
    const table = quote(resource.table);
    const existing = (
      await client.query(
        'SELECT column_name AS name, data_type AS type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1',
        [resource.table],
      )
    ).rows as Array<{ name: string; type: string }>;
    const columns = tableColumns(resource);
    if (existing.length === 0) {
      const defs = columns.map((c) => `${quote(c.name)} ${ddlType(c.type)}${c.name === 'id' ? ' PRIMARY KEY' : ''}`);
      await client.query(`CREATE TABLE ${table} (${defs.join(', ')})`);
      report.created.push(resource.name);
    } else {
      const have = new Map(existing.map((c) => [c.name, c.type]));
      if (have.get('id') !== DATA_TYPE[resource.idStyle === 'integer' ? 'bigint' : 'text']) {
        problems.push(idStyleChanged(resource.name, resource.idStyle));
        continue;
      }
      const stored = new Map(
        (
          (await client.query(`SELECT field, type FROM ${META} WHERE resource = $1`, [resource.name])).rows as Array<{
            field: string;
            type: FieldType;
          }>
        ).map((r) => [r.field, r.type]),
      );
      for (const c of columns) {
        const field = c.field;
        if (!field) continue;
        const declared = have.get(c.name);
        if (declared === undefined) {
          await client.query(`ALTER TABLE ${table} ADD COLUMN ${quote(c.name)} ${ddlType(c.type)}`);
          report.added.push(`${resource.name}.${field.name}`);
          continue;
        }
        const from = stored.get(field.name);
        let change: FieldChange | undefined;
        if (field.type === 'enum' && (from === undefined || from === 'enum' || from === 'string')) {
          change = await enumChange(client, resource, field);
        } else if (from && (from !== field.type || declared !== DATA_TYPE[pgType(field)])) {
          change = await retype(client, { resource, field, from, declared });
        }
        if (!change || !mayApply(change.problems) || !change.apply) continue;
        const broken = await guarded(client, resource, change.apply);
        if (broken) problems.push(broken);
        else if (change.report) report.changed.push(change.report);
      }
      const wanted = new Set(columns.map((c) => c.name));
      for (const [field] of stored) {
        const column = existing.find((c) => c.name === snakeCase(field))?.name;
        if (!column || wanted.has(column)) continue;
        const n = (
          (await client.query(`SELECT count(*)::int AS n FROM ${table} WHERE ${quote(column)} IS NOT NULL`))
            .rows[0] as { n: number }
        ).n;
        const line = `${resource.name}.${field} was removed from the spec; ${n} record(s) still hold a value for it (--allow-data-loss drops it)`;
        if (n > 0 && !mayApply([{ line, allowed: true }])) continue;
        await client.query(`ALTER TABLE ${table} DROP COLUMN ${quote(column)}`);
        await client.query(`DELETE FROM ${META} WHERE resource = $1 AND field = $2`, [resource.name, field]);
        report.dropped.push(`${resource.name}.${field}`);
      }
    }
    if (problems.length > 0) continue;
    for (const c of columns) {
      if (!c.field) continue;
      await client.query(
        `INSERT INTO ${META} (resource, field, type) VALUES ($1, $2, $3) ON CONFLICT (resource, field) DO UPDATE SET type = excluded.type`,
        [resource.name, c.field.name, c.field.type],
      );
    }
    const broken = await reconcileIndexes(client, resource);
    if (broken) problems.push(broken);
  }
  if (problems.length > 0) throw refusal(problems);
  await migratePostgresTallies(client, plan);
  return report;
};
