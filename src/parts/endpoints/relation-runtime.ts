import type { RelationPlan, ResourcePlan } from '../../plan/types.ts';
import type { Handler, HandlerInput, HandlerOutput, RuntimeContext } from '../../runtime/context.ts';
import { type Row, StoreError } from '../../storage/index.ts';
import { ApiError } from '../errors/api-error.ts';
import { createRecordShapes } from '../resources/computed-runtime.ts';
import { createRecordWriter, etagOf } from '../resources/record-io.ts';
import { createKeyLookup, notFoundByKey } from '../resources/record-keys.ts';
import type { RecordHandlers } from '../resources/runtime.ts';
import { createWireRecord } from './wire-runtime.ts';

const JSON_TYPE = 'application/json; charset=utf-8';

const isUniqueClash = (error: unknown) =>
  (error instanceof StoreError && error.kind === 'unique') ||
  (error instanceof ApiError && error.code === 'unique_violation');

/** The target record's answer as the relation declares it: its view (or get view) for this caller, on its wire. */
const createTargetAnswer = (ctx: RuntimeContext, target: ResourcePlan, relation: RelationPlan) => {
  const shapes = createRecordShapes(ctx, target);
  const record = createRecordWriter(target);
  const view = relation.view ? target.views.get(relation.view) : undefined;
  const shape = view
    ? { writer: shapes.viewWriter(view.name) ?? record, computed: view.computed }
    : shapes.shapeOf('get');
  const onWire = target.wire.plain ? undefined : createWireRecord(target);
  const envelope = relation.envelope === undefined ? target.wire.envelope : relation.envelope;
  return async (input: HandlerInput, row: Row): Promise<HandlerOutput> => {
    const [filled = row] = await shapes.fill([row], shape.computed, input.principal);
    const shown = shape.writer.toApi(record.visibleTo(filled, ctx.access.hiddenFields(target, input.principal)));
    const wired = onWire ? onWire(shown) : shown;
    const body = JSON.stringify(envelope ? { [envelope]: wired } : wired);
    return { status: 200, body, headers: { 'content-type': JSON_TYPE, etag: etagOf(row) } };
  };
};

/**
 * The add and remove handlers of a join resource's relation (`POST|DELETE /articles/{slug}/favorite`): the join
 * record keyed by the caller and the record the path names, created and deleted through the resource's own create
 * and delete (validation, access rules, references, events), idempotently: adding twice keeps one record (a
 * concurrent add that meets the unique pair finds the other's), removing what is not there is no change.
 */
export const compileRelationHandlers = (
  ctx: RuntimeContext,
  join: ResourcePlan,
  relation: RelationPlan,
  h: RecordHandlers,
): { add: Handler; remove: Handler } => {
  const target = ctx.plan.resourcesByName.get(relation.targetResource) as ResourcePlan;
  const keys = createKeyLookup(ctx);
  const callerTarget = ctx.plan.resourcesByName.get(join.fieldsByName.get(relation.caller)?.ref?.to ?? '');
  // References to integer ids travel as JSON integers, as a create body gives them.
  const asRef = (res: ResourcePlan | undefined, id: string): unknown =>
    res?.idStyle === 'integer' && /^\d+$/.test(id) ? Number(id) : id;
  const answer = relation.answer === 'target' ? createTargetAnswer(ctx, target, relation) : undefined;

  const anchor = async (input: HandlerInput): Promise<{ subject: string; row: Row }> => {
    const subject = input.principal?.subject;
    if (!subject) throw new ApiError('unauthenticated', `Sign in to change a ${join.name}.`);
    const values = relation.params.map((p) => input.params[p] ?? '');
    const row = await keys.find(target, values);
    if (!row || !ctx.access.canRead(target, input.principal, row)) throw notFoundByKey(target, values);
    return { subject, row };
  };
  const existing = async (subject: string, targetId: string): Promise<Row | undefined> => {
    const { rows } = await ctx.store.list(join.name, {
      filters: [
        { field: relation.caller, op: 'eq', value: subject },
        { field: relation.target, op: 'eq', value: targetId },
      ],
      sort: [],
      limit: 1,
      count: false,
    });
    return rows[0];
  };
  /** The params the join's own handlers take: its id and the parents of a nested collection. */
  const paramsOf = (values: Record<string, unknown>, id?: string): Record<string, string> => ({
    ...(id ? { id } : {}),
    ...Object.fromEntries(join.parentParams.map((p) => [p.param, String(values[p.field] ?? '')])),
  });
  const done = async (input: HandlerInput, row: Row): Promise<HandlerOutput> =>
    answer ? answer(input, row) : { status: 204 };

  const add: Handler = async (input) => {
    const { subject, row } = await anchor(input);
    if (!(await existing(subject, row.id))) {
      const body = { [relation.caller]: asRef(callerTarget, subject), [relation.target]: asRef(target, row.id) };
      const values = { [relation.caller]: subject, [relation.target]: row.id };
      try {
        await ctx.store.savepoint(() => h.create({ ...input, params: paramsOf(values), query: {}, headers: {}, body }));
      } catch (error) {
        // Another request added the same pair meanwhile: the unique pair kept one record, which is the answer.
        if (!isUniqueClash(error) || !(await existing(subject, row.id))) throw error;
      }
    }
    return done(input, row);
  };

  const remove: Handler = async (input) => {
    const { subject, row } = await anchor(input);
    const found = await existing(subject, row.id);
    if (!found) {
      if (relation.missing === 'not_found')
        throw new ApiError('not_found', `No ${join.name} of this caller for this ${target.name}.`);
      return done(input, row);
    }
    try {
      await h.remove({ ...input, params: paramsOf(found, found.id), query: {}, headers: {}, body: undefined });
    } catch (error) {
      // Removed by another request meanwhile: the relation is gone either way.
      const gone = error instanceof ApiError && error.code === 'precondition_failed';
      if (!gone || (await existing(subject, row.id))) throw error;
    }
    return done(input, row);
  };
  return { add, remove };
};
