import type { Database } from 'better-sqlite3';
import type { FieldType } from '../../parts/resources/field-schema.ts';
import type { FieldPlan } from '../../plan/types.ts';
import {
  type Conversion,
  conversionOf,
  enumOutcome,
  lossProblems,
  type Problem,
  retypeReport,
} from '../sql/conversions.ts';
import { quote, sqliteType } from './columns.ts';

export type { Problem };

/** What migrating one existing column to its field's plan takes. */
export interface FieldChange {
  readonly problems: readonly Problem[];
  /** Changes values in place (with --allow-data-loss): run before any rebuild. */
  readonly apply?: () => void;
  /** The column's new type and the SQL of its new value (over the old column): the table must be rebuilt. */
  readonly rebuild?: { readonly type: string; readonly value: string };
  /** What the change did to stored data, for the migration report. */
  readonly report?: string;
}

/**
 * The conversions of one migration, by column, for the SQL functions `ninefold_convert(key, value)` and
 * `ninefold_loss(key, value)`: conversions run in JavaScript (exact decimal rounding, JSON text), over every row,
 * inside the statements that copy or count them.
 */
export const conversionFunctions = (db: Database): Map<string, Conversion> => {
  const conversions = new Map<string, Conversion>();
  const of = (key: string) => conversions.get(key) as Conversion;
  db.function('ninefold_convert', { deterministic: true }, (key, value) =>
    value === null ? null : ((of(key as string).convert(value) ?? null) as string | number | null),
  );
  db.function('ninefold_loss', { deterministic: true }, (key, value) =>
    value === null ? null : (of(key as string).loss?.(value) ?? null),
  );
  return conversions;
};

const touched = (table: string, where: string) =>
  `UPDATE ${quote(table)} SET revision = revision + 1, updated_at = ? WHERE ${where}`;

/** A type change, or a column whose SQLite type does not match its field's type. */
export const retype = (
  db: Database,
  conversions: Map<string, Conversion>,
  at: { resource: string; table: string; field: FieldPlan; from: FieldType; declared: string },
): FieldChange => {
  const { resource, table, field, from } = at;
  const column = quote(field.column);
  const key = `${table}.${field.column}`;
  const conversion = conversionOf(from, field);
  conversions.set(key, conversion);
  const name = `${resource}.${field.name}`;
  const groups = conversion.loss
    ? (db
        .prepare(
          `SELECT ninefold_loss(?, ${column}) AS g, count(*) AS n FROM ${quote(table)} WHERE ${column} IS NOT NULL GROUP BY g HAVING g IS NOT NULL ORDER BY g`,
        )
        .all(key) as Array<{ g: string; n: number }>)
    : [];
  const problems = lossProblems(name, from, field, conversion, groups);
  const lost = groups.reduce((sum, g) => sum + g.n, 0);
  const wanted = sqliteType(field);
  return {
    problems,
    ...(lost > 0
      ? { apply: () => db.prepare(touched(table, `ninefold_loss(?, ${column}) IS NOT NULL`)).run(now(), key) }
      : {}),
    ...(conversion.rewrites || at.declared !== wanted
      ? { rebuild: { type: wanted, value: `ninefold_convert(${quoteText(key)}, ${column})` } }
      : {}),
    report: retypeReport(name, from, field, lost),
  };
};

/** An enum's stored values the spec no longer allows: each named with how many records hold it. */
export const enumChange = (db: Database, at: { resource: string; table: string; field: FieldPlan }): FieldChange => {
  const { resource, table, field } = at;
  const values = field.spec.values ?? [];
  const column = quote(field.column);
  const notAllowed = `${column} IS NOT NULL AND ${column} NOT IN (${values.map(() => '?').join(', ')})`;
  const held = db
    .prepare(
      `SELECT ${column} AS v, count(*) AS n FROM ${quote(table)} WHERE ${notAllowed} GROUP BY ${column} ORDER BY ${column}`,
    )
    .all(...values) as Array<{ v: unknown; n: number }>;
  if (held.length === 0) return { problems: [] };
  const outcome = enumOutcome(`${resource}.${field.name}`, field, held);
  const apply = outcome.apply;
  if (!apply) return { problems: outcome.problems };
  return {
    problems: outcome.problems,
    apply: () =>
      db
        .prepare(
          `UPDATE ${quote(table)} SET ${column} = ?, revision = revision + 1, updated_at = ? WHERE ${notAllowed}`,
        )
        .run(apply.value, now(), ...values),
    report: apply.report,
  };
};

const now = () => new Date().toISOString();
const quoteText = (text: string) => `'${text.replaceAll("'", "''")}'`;
