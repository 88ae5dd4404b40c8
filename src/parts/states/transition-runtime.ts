import type { ResourcePlan, StateMachinePlan, TransitionPlan } from '../../plan/types.ts';
import { type Handler, type HandlerInput, type RuntimeContext, runHooks, versionOf } from '../../runtime/context.ts';
import { compileBodyValidator } from '../../runtime/validator.ts';
import type { Row } from '../../storage/index.ts';
import { celPrincipal, type Principal } from '../auth/principal.ts';
import { ApiError } from '../errors/api-error.ts';
import { createReferenceEmbedder, embeddedFields } from '../resources/embed-references.ts';
import { objectSchema } from '../resources/json-schema.ts';
import { createRecordLoader, expectRevision } from '../resources/load-record.ts';
import { createRecordWriter, etagOf, idPattern } from '../resources/record-io.ts';
import { compileGuard } from './guard.ts';
import { scheduleTimers } from './timers.ts';

export interface TransitionRun {
  readonly row: Row;
  readonly input: Record<string, unknown>;
  readonly actor: string;
  readonly principal?: Principal;
  readonly revision?: number;
  /** The API version of the request (none for a timer). */
  readonly apiVersion?: string;
  /** The compare-and-set already sent for this row (see the handler): its changes and its outcome. */
  readonly sent?: SentUpdate;
}

interface SentUpdate {
  readonly changes: Record<string, unknown>;
  readonly after: Promise<Row | undefined>;
}

const ignore = () => undefined;

/** Names of the transitions a record in `state` may take. */
export const allowedFrom = (machine: StateMachinePlan, state: unknown): string[] =>
  machine.transitions.filter((t) => t.from.includes(String(state))).map((t) => t.name);

export const invalidTransition = (machine: StateMachinePlan, transition: string, state: unknown) =>
  new ApiError('invalid_transition', `${transition} is not allowed from ${String(state)}.`, undefined, {
    currentState: state,
    allowedTransitions: allowedFrom(machine, state),
  });

/**
 * Compiles one transition: its input validator, its guard and its compare-and-set. `apply` is shared by the
 * HTTP endpoint and the timer worker; it must run inside a write transaction.
 */
export const compileTransition = (
  ctx: RuntimeContext,
  resource: ResourcePlan,
  machine: StateMachinePlan,
  t: TransitionPlan,
) => {
  const writer = createRecordWriter(resource);
  const embed = createReferenceEmbedder(ctx, resource);
  const embedded = embeddedFields(resource);
  const guard = t.when ? compileGuard(t.when) : undefined;
  const validate = compileBodyValidator(ctx.schemas, objectSchema(t.input ?? {}, 'input'));
  const copied = Object.keys(t.input ?? {}).filter((name) => resource.fieldsByName.has(name) && name !== machine.field);
  // A machine with no timed transition schedules no timer, so a transition has none to cancel: a round trip saved
  // per transition on a database server.
  const timed = machine.transitions.some((other) => other.afterMs !== undefined);
  /** A transition from one state knows the state its compare-and-set compares before it reads the record. */
  const only = t.from.length === 1 ? t.from[0] : undefined;
  const ids = idPattern(resource);

  const changesOf = (input: Record<string, unknown>) => {
    const changes: Record<string, unknown> = { [machine.field]: t.to, updatedAt: ctx.now().toISOString() };
    for (const name of copied) if (input[name] !== undefined) changes[name] = input[name];
    return changes;
  };
  /** Compare-and-set: the row changes only if it is still in the state `from`. */
  const compareAndSet = (id: string, changes: Record<string, unknown>, from: unknown, revision?: number) =>
    ctx.store.update(resource.name, id, changes, {
      where: { [machine.field]: from },
      ...(revision !== undefined ? { revision } : {}),
    });

  const apply = async ({ row, input, actor, revision, principal, apiVersion, sent }: TransitionRun): Promise<Row> => {
    const from = row[machine.field];
    if (!t.from.includes(String(from))) throw invalidTransition(machine, t.name, from);
    if (guard && !guard({ record: writer.toApi(row), input, principal: celPrincipal(principal) })) {
      throw new ApiError('transition_guard_failed', `The guard of ${t.name} does not hold: ${t.when}`, undefined, {
        guard: t.when,
      });
    }
    // The compare-and-set the handler sent already compared the state the checks above saw (the only one).
    const changes = sent ? sent.changes : changesOf(input);
    const after = await (sent ? sent.after : compareAndSet(row.id, changes, from, revision));
    if (!after) {
      const fresh = await ctx.store.get(resource.name, row.id);
      if (revision !== undefined && fresh && fresh.revision !== revision) {
        throw new ApiError('precondition_failed', 'The record has changed since the ETag you sent; read it again.');
      }
      throw invalidTransition(machine, t.name, fresh?.[machine.field]);
    }
    await ctx.store.stateLog.append(resource.name, row.id, {
      transition: t.name,
      from: String(from),
      to: t.to,
      at: String(changes.updatedAt),
      input,
      actor,
    });
    if (timed) {
      await ctx.store.stateLog.cancel(resource.name, row.id);
      await scheduleTimers(ctx, resource, machine, after);
    }
    await runHooks(ctx, {
      kind: 'transitioned',
      resource,
      before: row,
      after,
      transition: t,
      input,
      actor,
      ...(apiVersion ? { apiVersion } : {}),
    });
    return after;
  };

  const load = createRecordLoader(ctx, resource);
  const handler: Handler = async (request: HandlerInput) => {
    const body = request.body === undefined ? {} : request.body;
    const invalid = validate(body);
    if (invalid) throw invalid;
    const loading = load(request);
    // From one state and without If-Match, the compare-and-set goes out right behind the read, before its answer:
    // on a database server both leave in one round trip. It runs in the request's transaction, after the read: when
    // a check below refuses (404, 403, the guard, the state), the transaction rolls back and it changed nothing.
    const id = request.params.id ?? '';
    let sent: SentUpdate | undefined;
    if (only !== undefined && request.headers['if-match'] === undefined && ids.test(id)) {
      const changes = changesOf(body as Record<string, unknown>);
      sent = { changes, after: compareAndSet(id, changes, only) };
      // Awaited in apply; when a check refuses first, its outcome is dropped with the transaction.
      sent.after.catch(ignore);
    }
    const row = await loading;
    ctx.access.authorizeTransition(resource, t.name, request.principal, row, body);
    const revision = request.headers['if-match'] === undefined ? undefined : expectRevision(request, row);
    const after = await apply({
      row,
      input: body as Record<string, unknown>,
      actor: request.caller,
      ...(request.principal ? { principal: request.principal } : {}),
      ...(revision !== undefined ? { revision } : {}),
      ...(sent ? { sent } : {}),
      ...versionOf(request),
    });
    const visible = writer.visibleTo(after, ctx.access.hiddenFields(resource, request.principal));
    let answer: string;
    if (embedded.length === 0) answer = writer.serialize(visible);
    else {
      const shown = writer.toApi(visible);
      await embed([shown], embedded, request.principal);
      answer = JSON.stringify(shown);
    }
    return {
      status: 200,
      body: answer,
      headers: { 'content-type': 'application/json; charset=utf-8', etag: etagOf(after) },
    };
  };
  return { apply, handler };
};

/** GET <item>/history: every transition the record took, oldest first. */
export const compileHistoryHandler = (ctx: RuntimeContext, resource: ResourcePlan): Handler => {
  const load = createRecordLoader(ctx, resource);
  return async (request) => {
    const row = await load(request);
    const data = await ctx.store.stateLog.history(resource.name, row.id);
    return {
      status: 200,
      body: JSON.stringify({ data }),
      headers: { 'content-type': 'application/json; charset=utf-8' },
    };
  };
};
