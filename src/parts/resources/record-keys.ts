import type { FieldPlan, ResourcePlan } from '../../plan/types.ts';
import type { RuntimeContext } from '../../runtime/context.ts';
import type { Filter, Row } from '../../storage/index.ts';
import { ApiError } from '../errors/api-error.ts';
import { idPattern } from './record-io.ts';

/** How many path values name one record: one for an id, one per key field (a ref key field: its target's). */
export const keyArity = (
  plan: RuntimeContext['plan'],
  resource: ResourcePlan,
  seen: ReadonlySet<string> = new Set(),
): number => {
  if (resource.key.length === 0 || seen.has(resource.name)) return 1;
  const inner = new Set([...seen, resource.name]);
  return resource.key.reduce((n, name) => {
    const target = plan.resourcesByName.get(resource.fieldsByName.get(name)?.ref?.to ?? '');
    return n + (target ? keyArity(plan, target, inner) : 1);
  }, 0);
};

/** A path value as the key field stores it; undefined when the field could not hold it. */
const keyValue = (field: FieldPlan | undefined, text: string): unknown => {
  if (field?.type === 'integer') return /^-?[0-9]{1,15}$/.test(text) ? Number(text) : undefined;
  if (field?.type === 'number') return Number.isFinite(Number(text)) && text.trim() !== '' ? Number(text) : undefined;
  if (field?.type === 'boolean') return text === 'true' ? true : text === 'false' ? false : undefined;
  return text;
};

/** 404 for a record named by its key: the same code and shape as for a missing id. */
export const notFoundByKey = (resource: ResourcePlan, values: readonly string[], fields = resource.key) =>
  new ApiError('not_found', `No ${resource.name} with ${fields.length ? fields.join('/') : 'id'} ${values.join('/')}.`);

/** Finds records by natural key (whatever the caller may read: callers check that), and a record's key values. */
export const createKeyLookup = (ctx: RuntimeContext) => {
  const { plan, store } = ctx;
  const find = async (
    resource: ResourcePlan,
    values: readonly string[],
    given: Readonly<Record<string, string>> = {},
  ): Promise<Row | undefined> => {
    if (resource.key.length === 0) {
      const id = values[0] ?? '';
      return idPattern(resource).test(id) ? store.get(resource.name, id) : undefined;
    }
    const filters: Filter[] = [];
    let at = 0;
    for (const name of resource.key) {
      const field = resource.fieldsByName.get(name);
      const target = plan.resourcesByName.get(field?.ref?.to ?? '');
      let value: unknown = given[name];
      if (value === undefined && target) {
        const n = keyArity(plan, target);
        value = (await find(target, values.slice(at, at + n)))?.id;
        at += n;
      } else if (value === undefined) value = keyValue(field, values[at++] ?? '');
      if (value === undefined) return undefined;
      filters.push({ field: name, op: 'eq', value });
    }
    const { rows } = await store.list(resource.name, { filters, sort: [], limit: 1, count: false });
    return rows[0];
  };
  /** The values that name the record with this id in a path; undefined when there is no such record. */
  const valuesOf = async (resource: ResourcePlan, id: string, row?: Row): Promise<string[] | undefined> => {
    if (resource.key.length === 0) return [id];
    const record = row ?? (idPattern(resource).test(id) ? await store.get(resource.name, id) : undefined);
    if (!record) return undefined;
    const out: string[] = [];
    for (const name of resource.key) {
      const target = plan.resourcesByName.get(resource.fieldsByName.get(name)?.ref?.to ?? '');
      const inner = target ? await valuesOf(target, String(record[name] ?? '')) : [String(record[name] ?? '')];
      if (!inner) return undefined;
      out.push(...inner);
    }
    return out;
  };
  return { find, valuesOf };
};

/** The path of a record (its item path with every parameter filled in), for Location headers. */
export const createRecordPath = (ctx: RuntimeContext, resource: ResourcePlan) => {
  const { path, binding, plain } = resource.item;
  if (plain)
    return async (row: Row, params: Readonly<Record<string, string>>) =>
      path.replace(/\{(\w+)\}/g, (_, p: string) => (p === 'id' ? row.id : (params[p] ?? '')));
  const keys = createKeyLookup(ctx);
  const parentFields = binding.parents.map((g) => g.field);
  const itemFields = resource.key.length ? resource.key.filter((k) => !parentFields.includes(k)) : ['id'];
  const targetOf = (field: string) => ctx.plan.resourcesByName.get(resource.fieldsByName.get(field)?.ref?.to ?? '');
  return async (row: Row): Promise<string> => {
    const values = new Map<string, string>();
    const fill = async (params: readonly string[], fields: readonly string[]) => {
      const texts: string[] = [];
      for (const field of fields) {
        const target = field === 'id' ? undefined : targetOf(field);
        const value = field === 'id' ? row.id : String(row[field] ?? '');
        texts.push(...((target ? await keys.valuesOf(target, value) : [value]) ?? []));
      }
      for (const [i, p] of params.entries()) values.set(p, texts[i] ?? '');
    };
    for (const group of binding.parents) await fill(group.params, [group.field]);
    await fill(binding.item, itemFields);
    return path.replace(/\{(\w+)\}/g, (_, p: string) => encodeURIComponent(values.get(p) ?? ''));
  };
};
