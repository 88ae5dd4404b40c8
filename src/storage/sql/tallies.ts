import type { TallyPlan } from '../../parts/resources/computed-tally.ts';
import type { Plan, ResourcePlan } from '../../plan/types.ts';
import { quote } from './dialect.ts';
import { SYSTEM_COLUMNS } from './list-sql.ts';

/** A tally as the database sees it: tables, columns and the condition as SQL over a trigger's NEW or OLD row. */
export interface TallySql {
  /** The counted-for table and its tally column, whose name (a hash of the definition) also names the triggers. */
  readonly table: string;
  readonly column: string;
  /** The counted table and the column that holds the counted-for id. */
  readonly from: string;
  readonly via: string;
  /** `via` of a row (`NEW`, `OLD`, the table) as the counted-for id compares: PostgreSQL's integer ids are bigint. */
  readonly viaAsId: (row: string) => string;
  /** Whether a row of the counted table is counted: `NEW."state" = 'open'` (true when every row is). */
  readonly counts: (row: 'NEW' | 'OLD') => string;
  /** The counted table's columns a change of which can move a row between tallies. */
  readonly watched: readonly string[];
  /** Sets each record's tally that differs from a fresh count (when the tally is new or its triggers were gone). */
  readonly backfill: string;
}

const SQL_OPS = { eq: '=', ne: '<>', lt: '<', lte: '<=', gt: '>', gte: '>=' } as const;

const literal = (dialect: 'sqlite' | 'postgres', v: string | number | boolean): string => {
  if (typeof v === 'string') return `'${v.replaceAll("'", "''")}'`;
  if (typeof v === 'boolean') return dialect === 'sqlite' ? (v ? '1' : '0') : v ? 'TRUE' : 'FALSE';
  return String(v);
};

const columnOf = (r: ResourcePlan, field: string) =>
  SYSTEM_COLUMNS[field] ?? r.fieldsByName.get(field)?.column ?? field;

/** Every tally the plan's computed fields use, once each (a view that shows the same count shares its column). */
export const talliesOf = (plan: Plan, dialect: 'sqlite' | 'postgres'): TallySql[] => {
  const found = new Map<string, TallySql>();
  for (const outer of plan.resources) {
    const fields = [...outer.computed, ...[...outer.views.values()].flatMap((v) => v.computed)];
    for (const field of fields) {
      const tally: TallyPlan | undefined = field.tally;
      const from = tally && plan.resourcesByName.get(tally.from);
      if (!tally || !from || found.has(tally.column)) continue;
      const conditions = (row: string) =>
        tally.where.map(
          (w) => `${row}.${quote(columnOf(from, w.field))} ${SQL_OPS[w.op]} ${literal(dialect, w.value)}`,
        );
      const via = columnOf(from, tally.via);
      const viaAsId = (row: string) =>
        dialect === 'postgres' && outer.idStyle === 'integer'
          ? `CAST(${row}.${quote(via)} AS bigint)`
          : `${row}.${quote(via)}`;
      const inner = conditions(quote(from.table));
      // Rows already right are left alone: a rewrite of every row would leave PostgreSQL a dead copy of each.
      const count =
        `(SELECT count(*) FROM ${quote(from.table)} ` +
        `WHERE ${[`${viaAsId(quote(from.table))} = ${quote(outer.table)}.id`, ...inner].join(' AND ')})`;
      found.set(tally.column, {
        table: outer.table,
        column: tally.column,
        from: from.table,
        via,
        viaAsId,
        watched: [...new Set([via, ...tally.where.map((w) => columnOf(from, w.field))])],
        counts: (row) => conditions(row).join(' AND ') || 'TRUE',
        backfill: `UPDATE ${quote(outer.table)} SET ${quote(tally.column)} = ${count} WHERE ${quote(tally.column)} <> ${count}`,
      });
    }
  }
  return [...found.values()];
};
