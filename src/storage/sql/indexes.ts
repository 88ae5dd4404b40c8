import type { ResourcePlan } from '../../plan/types.ts';
import { quote } from './dialect.ts';

/** The indexes of a resource's table, the same SQL on every backend. */
export const indexStatements = (resource: ResourcePlan): string[] => {
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
