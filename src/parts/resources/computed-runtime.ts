import fastJson from 'fast-json-stringify';
import type { ComputedFieldPlan, Operation, ResourcePlan, ViewPlan } from '../../plan/types.ts';
import type { RuntimeContext } from '../../runtime/context.ts';
import type { ComputedColumn, ListQuery, RelatedCondition, Row } from '../../storage/index.ts';
import { celPrincipal, type Principal } from '../auth/principal.ts';
import type { ComputedQueryPlan, ComputedVars } from './computed-cel.ts';
import { viewSchema } from './json-schema.ts';
import { createRecordWriter, numeric } from './record-io.ts';

/** What a computed field's value side reads for this caller: `caller` is null when nobody signed in. */
export const computedVars = (principal: Principal | undefined): ComputedVars => ({
  caller: principal?.subject ? principal.subject : null,
  principal: celPrincipal(principal),
});

/**
 * Columns already made, per caller and list of fields: an API key's principal is one object across its requests
 * (principals are never changed), so its columns, and the store's key of their shape, are made once.
 */
const columnsOf = new WeakMap<Principal, WeakMap<readonly ComputedFieldPlan[], readonly ComputedColumn[]>>();
const anonymousColumns = new WeakMap<readonly ComputedFieldPlan[], readonly ComputedColumn[]>();

/** The storage columns of computed fields for one caller: their compiled terms with this caller's values. */
export const computedColumns = (
  fields: readonly ComputedFieldPlan[],
  principal: Principal | undefined,
): readonly ComputedColumn[] => {
  if (fields.length === 0) return [];
  let made = principal ? columnsOf.get(principal) : anonymousColumns;
  if (!made && principal) {
    made = new WeakMap();
    columnsOf.set(principal, made);
  }
  const found = made?.get(fields);
  if (found) return found;
  const vars = computedVars(principal);
  const columns = fields.map((c) => {
    // A tally less the caller's own records: the records to take away are those the `!=` term leaves out.
    const less = c.tally?.less !== undefined;
    return {
      name: c.name,
      kind: c.query.kind,
      from: c.query.from,
      terms: c.query.terms.map((t) =>
        'record' in t
          ? t
          : {
              field: t.field,
              op: less && t.constant === undefined ? ('eq' as const) : t.op,
              value: t.value(vars) as unknown,
            },
      ),
      ...(c.tally ? { tally: c.tally.column } : {}),
      ...(less ? { less } : {}),
    };
  });
  made?.set(fields, columns);
  return columns;
};

/** An `exists(...)` condition (a named list's filter) for one caller: its terms with this caller's values. */
export const celCondition = (query: ComputedQueryPlan, principal: Principal | undefined): RelatedCondition => {
  const vars = computedVars(principal);
  return {
    from: query.from,
    terms: query.terms.map((t) =>
      'record' in t
        ? { field: t.field, op: t.op, outer: t.record }
        : { field: t.field, op: t.op, value: t.value(vars) as unknown },
    ),
  };
};

/** A list query that also computes `fields` for the caller, in the same SELECT. */
export const withComputed = (
  query: ListQuery,
  fields: readonly ComputedFieldPlan[],
  principal: Principal | undefined,
): ListQuery => (fields.length ? { ...query, computed: computedColumns(fields, principal) } : query);

/** A query for the records with these ids (at least one). */
export const byIds = (ids: readonly string[]): ListQuery => ({
  filters: [{ field: 'id', op: 'in', value: ids }],
  sort: [],
  limit: ids.length,
  count: false,
});

/** Turns a row into a view's answer: its fields (those the caller may see) and its computed fields. */
export const createViewWriter = (resource: ResourcePlan, view: ViewPlan) => {
  const names = [...view.fields, ...view.computed.map((c) => c.name)];
  const stringify = fastJson(viewSchema(resource, view) as unknown as Parameters<typeof fastJson>[0]);
  // Integer ids (and references to them) travel as JSON integers, as in the whole record.
  const integers = new Set(
    names.filter((n) =>
      n === 'id' ? resource.idStyle === 'integer' : resource.fieldsByName.get(n)?.ref?.idStyle === 'integer',
    ),
  );
  const toApi = (row: Row): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    for (const name of names) {
      const v = integers.has(name) ? numeric(row[name]) : row[name];
      if (v !== null && v !== undefined) out[name] = v;
      else if (resource.fieldsByName.get(name)?.nullable) out[name] = null;
    }
    return out;
  };
  return { toApi, serialize: (row: Row) => stringify(toApi(row)) };
};

export type ShapeWriter = { toApi(row: Row): Record<string, unknown>; serialize(row: Row): string };

/**
 * How one resource's records are answered: the whole record (with the resource's computed fields) or a view, per
 * operation; and how to read the computed fields of rows already loaded, for the caller, in one query.
 */
const compiled = new WeakMap<RuntimeContext, Map<string, RecordShapes>>();

export const createRecordShapes = (ctx: RuntimeContext, resource: ResourcePlan): RecordShapes => {
  const known = compiled.get(ctx) ?? new Map<string, RecordShapes>();
  compiled.set(ctx, known);
  const found = known.get(resource.name);
  if (found) return found;
  const shapes = compileRecordShapes(ctx, resource);
  known.set(resource.name, shapes);
  return shapes;
};

const compileRecordShapes = (ctx: RuntimeContext, resource: ResourcePlan) => {
  const record = createRecordWriter(resource);
  const views = new Map([...resource.views.values()].map((v) => [v.name, createViewWriter(resource, v)]));
  const viewOf = (name: string | undefined) => (name ? resource.views.get(name) : undefined);
  /** The answer shape of an operation, and the computed fields it shows. */
  const shapeOf = (op: Operation): { writer: ShapeWriter; computed: readonly ComputedFieldPlan[] } => {
    const view = viewOf(resource.answerViews[op]);
    const writer = view ? views.get(view.name) : undefined;
    return view && writer ? { writer, computed: view.computed } : { writer: record, computed: resource.computed };
  };
  /** `rows` with `fields` computed for the caller (one query for all of them); the rows themselves when none. */
  const fill = async (
    rows: readonly Row[],
    fields: readonly ComputedFieldPlan[],
    principal: Principal | undefined,
  ): Promise<Row[]> => {
    if (fields.length === 0 || rows.length === 0) return [...rows];
    const { rows: computed } = await ctx.store.list(
      resource.name,
      withComputed(byIds(rows.map((r) => r.id)), fields, principal),
    );
    const byId = new Map(computed.map((r) => [r.id, r]));
    return rows.map((row) => {
      const found = byId.get(row.id);
      if (!found) return row;
      const out: Row = { ...row };
      for (const f of fields) out[f.name] = found[f.name];
      return out;
    });
  };
  return {
    shapeOf,
    fill,
    viewWriter: (name: string) => views.get(name),
    /** Whether an operation's answer reads computed fields (and so a query of its own). */
    computes: (op: Operation) => shapeOf(op).computed.length > 0,
  };
};

export type RecordShapes = ReturnType<typeof compileRecordShapes>;

/**
 * The records a list page's references name, as the caller may see them: the whole record, or the view the
 * reference field names with its computed fields (read for all of the page's references in one query).
 */
export const createExpansion = (ctx: RuntimeContext, resource: ResourcePlan) => {
  const shapes = new Map(ctx.plan.resources.map((r) => [r.name, createRecordShapes(ctx, r)]));
  const writers = new Map(ctx.plan.resources.map((r) => [r.name, createRecordWriter(r)]));
  return async (
    field: string,
    ids: readonly string[],
    principal: Principal | undefined,
  ): Promise<Map<string, Record<string, unknown>> | undefined> => {
    const ref = resource.fieldsByName.get(field)?.ref;
    const target = ref ? ctx.plan.resourcesByName.get(ref.to) : undefined;
    const shape = target ? shapes.get(target.name) : undefined;
    const writer = target ? writers.get(target.name) : undefined;
    if (!ref || !target || !shape || !writer) return undefined;
    const view = ref.view ? target.views.get(ref.view) : undefined;
    const viewWriter = view ? shape.viewWriter(view.name) : undefined;
    if (ids.length === 0) return new Map();
    const hidden = ctx.access.hiddenFields(target, principal);
    const fields = view ? view.computed : target.computed;
    const rows = fields.length
      ? (await ctx.store.list(target.name, withComputed(byIds(ids), fields, principal))).rows
      : await ctx.store.getMany(target.name, ids);
    // A referenced record the caller may not read stays a bare id.
    const filled = rows.filter((r: Row) => ctx.access.canRead(target, principal, r));
    return new Map(filled.map((r) => [r.id, (viewWriter ?? writer).toApi(writer.visibleTo(r, hidden))] as const));
  };
};
