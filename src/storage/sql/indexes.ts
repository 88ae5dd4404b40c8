import type { ResourcePlan } from '../../plan/types.ts';
import { quote } from './dialect.ts';

/** One index a resource's table should have. */
export interface IndexDef {
  readonly name: string;
  readonly unique: boolean;
  readonly columns: readonly string[];
  /** The spec's names of the indexed fields (for a refusal's wording). */
  readonly fields: readonly string[];
}

/** An index the table has, as the database's catalogue describes it. */
export interface ExistingIndex {
  readonly name: string;
  readonly unique: boolean;
  readonly columns: readonly string[];
}

/** The indexes of a resource's table, the same on every backend. */
export const indexDefs = (resource: ResourcePlan): IndexDef[] => {
  const t = resource.table;
  // No index on created_at: ids are ULIDs, so creation order is id order, the table's own order.
  const out: IndexDef[] = [];
  for (const field of resource.fields) {
    const filterable =
      resource.list.filter.includes(field.name) || resource.list.sort.includes(field.name) || field.ref;
    if (field.unique) {
      out.push({ name: `${t}__${field.column}__unique`, unique: true, columns: [field.column], fields: [field.name] });
    } else if (filterable) {
      out.push({ name: `${t}__${field.column}`, unique: false, columns: [field.column, 'id'], fields: [field.name] });
    }
  }
  for (const index of resource.indexes) {
    const columns = index.fields.map((f) => resource.fieldsByName.get(f)?.column ?? f);
    out.push({
      name: index.name ?? `${t}__${columns.join('_')}`,
      unique: index.unique === true,
      columns,
      fields: index.fields,
    });
  }
  return out;
};

export const createIndex = (table: string, index: IndexDef): string =>
  `CREATE ${index.unique ? 'UNIQUE ' : ''}INDEX IF NOT EXISTS ${quote(index.name)} ON ${quote(table)} (${index.columns.map(quote).join(', ')})`;

/** The statements that create a resource's indexes where they are missing. */
export const indexStatements = (resource: ResourcePlan): string[] =>
  indexDefs(resource).map((index) => createIndex(resource.table, index));

/**
 * What brings a table's indexes to the spec: an index whose declaration changed (unique or not, its columns) is
 * dropped and made again, a missing one made, and one Ninefold made that the spec no longer asks for (its name
 * starts with `<table>__`) dropped, so a field or index no longer unique stops refusing equal values. Indexes under
 * other names are an operator's own and stay.
 */
export const indexChanges = (
  resource: ResourcePlan,
  existing: readonly ExistingIndex[],
  /** The name the database gives an index of this name (PostgreSQL cuts names at 63 bytes). */
  stored: (name: string) => string = (name) => name,
): { readonly drop: readonly string[]; readonly create: readonly IndexDef[] } => {
  const wanted = indexDefs(resource).map((index) => ({ ...index, name: stored(index.name) }));
  const byName = new Map(existing.map((e) => [e.name, e]));
  const names = new Set(wanted.map((w) => w.name));
  const drop: string[] = [];
  const create: IndexDef[] = [];
  for (const index of wanted) {
    const found = byName.get(index.name);
    if (found && found.unique === index.unique && found.columns.join('\0') === index.columns.join('\0')) continue;
    if (found) drop.push(found.name);
    create.push(index);
  }
  for (const e of existing) if (!names.has(e.name) && e.name.startsWith(`${resource.table}__`)) drop.push(e.name);
  return { drop, create };
};
