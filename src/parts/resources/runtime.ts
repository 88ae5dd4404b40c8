import type { Operation, ResourcePlan } from '../../plan/types.ts';
import { type Handler, type HandlerInput, type RuntimeContext, runHooks, versionOf } from '../../runtime/context.ts';
import { compileBodyValidator } from '../../runtime/validator.ts';
import type { Row } from '../../storage/index.ts';
import { hashPassword, isPasswordHash } from '../auth/passwords.ts';
import { parseExpand } from '../endpoints/expand-query.ts';
import { ApiError } from '../errors/api-error.ts';
import { createRecordShapes } from './computed-runtime.ts';
import { createDerivedWriter } from './derived-fields.ts';
import { createReferenceEmbedder, embeddedFields } from './embed-references.ts';
import { createSchema, patchSchema } from './json-schema.ts';
import { createParentCheck, createRecordLoader, expectRevision } from './load-record.ts';
import { mergePatch } from './merge-patch.ts';
import { createNormalizer } from './normalize.ts';
import { createRecordWriter, etagOf, mintId, noneMatch } from './record-io.ts';
import { createRecordPath } from './record-keys.ts';
import { checkReferences, holdsReferences, releaseReferences } from './references.ts';
import { SYSTEM_FIELDS } from './system-fields.ts';

export interface RecordHandlers {
  readonly get: Handler;
  readonly create: Handler;
  readonly update: Handler;
  readonly replace: Handler;
  readonly remove: Handler;
}

const JSON_TYPE = 'application/json; charset=utf-8';

/** Compiles the CRUD handlers of one resource: validators, serialiser and id pattern are built here, once. */
export const compileRecordHandlers = (ctx: RuntimeContext, resource: ResourcePlan): RecordHandlers => {
  const writer = createRecordWriter(resource);
  const readOnly = new Set<string>([
    ...SYSTEM_FIELDS,
    ...resource.fields.filter((f) => f.readOnly).map((f) => f.name),
    ...resource.computed.map((c) => c.name),
  ]);
  const shapes = createRecordShapes(ctx, resource);
  const embed = createReferenceEmbedder(ctx, resource);
  const embedded = embeddedFields(resource);
  const stateField = resource.states?.field;
  const validateCreate = compileBodyValidator(ctx.schemas, createSchema(resource), readOnly);
  const validatePatch = compileBodyValidator(ctx.schemas, patchSchema(resource), readOnly);
  const writable = resource.fields.filter((f) => !f.readOnly);
  const normalizer = createNormalizer(resource);
  const derived = createDerivedWriter(ctx, resource);

  const owner = ctx.access.ownerOf(resource);
  const passwords = [...(ctx.passwordFields.get(resource.name) ?? [])];

  const mergeNames = (always: readonly string[], asked: readonly string[]): readonly string[] =>
    asked.length === 0 ? always : [...new Set([...always, ...asked])];

  /** A record's answer from its serialised body. */
  const answerWith = (status: number, row: Row, body: string, extra?: Record<string, string>) => ({
    status,
    body,
    headers: extra
      ? { 'content-type': JSON_TYPE, etag: etagOf(row), ...extra }
      : { 'content-type': JSON_TYPE, etag: etagOf(row) },
  });
  // The answer shape of each operation, looked up once, not per request.
  const shapeOf = new Map(
    (['get', 'create', 'update', 'replace'] as const).map((op) => [op as Operation, shapes.shapeOf(op)]),
  );
  /**
   * The operation's answer: the record or the operation's view, with its computed fields for this caller (already
   * in `row` when `computedRead`), and the `references` embedded.
   */
  const respond = async (
    input: HandlerInput,
    op: Operation,
    status: number,
    row: Row,
    extra?: Record<string, string>,
    computedRead = false,
    references: readonly string[] = embedded,
  ) => {
    const shape = shapeOf.get(op) ?? shapes.shapeOf(op);
    const [shown = row] = computedRead ? [row] : await shapes.fill([row], shape.computed, input.principal);
    const visible = writer.visibleTo(shown, ctx.access.hiddenFields(resource, input.principal));
    if (references.length === 0) return answerWith(status, row, shape.writer.serialize(visible), extra);
    const answer = shape.writer.toApi(visible);
    await embed([answer], references, input.principal);
    return answerWith(status, row, JSON.stringify(answer), extra);
  };

  /** Passwords of a user store are stored as scrypt hashes only. */
  const hashPasswords = async (values: Record<string, unknown>) => {
    for (const name of passwords) {
      const v = values[name];
      if (typeof v === 'string' && !isPasswordHash(v)) values[name] = await hashPassword(v);
    }
  };

  // A reference to integer ids travels as a JSON integer; the caller's subject is text.
  const ownerIsInteger = owner !== undefined && resource.fieldsByName.get(owner)?.ref?.idStyle === 'integer';
  const ownerValue = (subject: string): unknown =>
    ownerIsInteger && /^[1-9][0-9]{0,15}$/.test(subject) ? Number(subject) : subject;
  const isCaller = (value: unknown, subject: string | undefined) =>
    subject !== undefined && (value === subject || (ownerIsInteger && String(value) === subject));

  /** The owner field is the caller's; a body may name another owner only where an explicit create rule allows. */
  const readOnlyOwner = () =>
    new ApiError('read_only_field', `${owner} is set from the caller.`, [
      { pointer: `#/${owner}`, code: 'read_only_field', message: `${owner} is set from the caller` },
    ]);

  const load = createRecordLoader(ctx, resource);

  const writers = new Map(
    resource.fields.flatMap((f) =>
      f.spec.writableBy?.length ? [[f.name, f.spec.writableBy.join(', ')] as const] : [],
    ),
  );
  /**
   * A body may not set read-only fields, nor fields whose `writableBy` names none of the caller's roles (mass
   * assignment): all of them are listed at once. Sending such a field is refused even with its current value, so
   * that a field the caller may not read cannot be probed.
   */
  const rejectLocked = (input: HandlerInput) => {
    const body = input.body;
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return;
    const unwritable = ctx.access.unwritableFields(resource, input.principal);
    const locked = Object.keys(body).filter((k) => readOnly.has(k) || unwritable.has(k));
    if (!locked.some((k) => unwritable.has(k))) return;
    throw new ApiError(
      'read_only_field',
      `These fields cannot be written by this caller: ${locked.join(', ')}.`,
      locked.map((k) => ({
        pointer: `#/${k}`,
        code: 'read_only',
        message: unwritable.has(k) ? `only ${writers.get(k)} may set ${k}` : `${k} is read-only`,
      })),
    );
  };

  const rejectStateWrite = (body: unknown) => {
    if (stateField && body && typeof body === 'object' && stateField in body) {
      throw new ApiError('use_transition_endpoint', `${stateField} changes only through the transition endpoints.`, [
        { pointer: `#/${stateField}`, code: 'use_transition_endpoint', message: `${stateField} is set by transitions` },
      ]);
    }
  };

  /** Parent references come from the path of a nested collection; a body that contradicts it is refused. */
  const bindParents = (input: HandlerInput, values: Record<string, unknown>) => {
    for (const p of resource.parentParams) {
      const fromPath = input.params[p.param];
      // A body without the field arrives here as null (writableValues fills absent fields).
      if (values[p.field] !== undefined && values[p.field] !== null && values[p.field] !== fromPath) {
        throw new ApiError('validation_failed', `${p.field} is given by the path.`, [
          { pointer: `#/${p.field}`, code: 'conflicts_with_path', message: `must equal the path's ${p.param}` },
        ]);
      }
      values[p.field] = fromPath;
    }
  };

  const writableValues = (source: Record<string, unknown>, withDefaults: boolean) => {
    const values: Record<string, unknown> = {};
    for (const f of writable) {
      const v = source[f.name];
      values[f.name] = v !== undefined ? v : withDefaults && f.hasDefault ? structuredClone(f.default) : null;
    }
    return keepIntegerRefsAsText(values);
  };

  /** References to integer ids arrive as JSON integers and are kept as the id's text, as the path gives it. */
  const integerRefs = writable.filter((f) => f.ref?.idStyle === 'integer').map((f) => f.name);
  const keepIntegerRefsAsText = (values: Record<string, unknown>) => {
    for (const name of integerRefs) if (typeof values[name] === 'number') values[name] = String(values[name]);
    return values;
  };
  /** The stored values as a body would give them, to validate a merged patch as a whole. */
  const integerRefsAsNumbers = (values: Record<string, unknown>) => {
    for (const name of integerRefs) if (typeof values[name] === 'string') values[name] = Number(values[name]);
    return values;
  };
  const sequences = resource.fields.flatMap((f) => (f.sequence ? [{ field: f, per: f.sequence }] : []));
  const pathOf = createRecordPath(ctx, resource);

  const parentsOf = createParentCheck(ctx, resource);
  // Work a resource without it skips: each await is a promise, and under a transaction's async context a hook call.
  const checksReferences = holdsReferences(resource);

  const create: Handler = async (input) => {
    rejectLocked(input);
    if (resource.parentParams.length) await parentsOf(input);
    let body = input.body;
    const subject = input.principal?.subject;
    const sentOwner =
      owner !== undefined && body !== null && typeof body === 'object' && !Array.isArray(body) && owner in body;
    if (owner && subject && !sentOwner && body !== null && typeof body === 'object' && !Array.isArray(body)) {
      body = { ...body, [owner]: ownerValue(subject) };
    }
    body = normalizer.input(body);
    const invalid = validateCreate(body);
    if (invalid) throw invalid;
    const values = writableValues(body as Record<string, unknown>, true);
    normalizer.arrays(values);
    bindParents(input, values);
    if (owner && sentOwner && !isCaller(values[owner], subject) && !ctx.access.explicitCreate(resource))
      throw readOnlyOwner();
    try {
      ctx.access.authorize(resource, 'create', input.principal, values, input.body);
    } catch (error) {
      if (owner && sentOwner && !isCaller(values[owner], subject)) throw readOnlyOwner();
      throw error;
    }
    if (passwords.length) await hashPasswords(values);
    if (checksReferences) await checkReferences(ctx, resource, values, input.principal);
    const nowMs = ctx.now().getTime();
    const now = new Date(nowMs).toISOString();
    const id = await mintId(resource, nowMs, ctx.store);
    const row: Row = { id, createdAt: now, updatedAt: now, revision: 1, ...values };
    for (const f of resource.fields) {
      if (f.readOnly && row[f.name] === undefined) row[f.name] = f.hasDefault ? structuredClone(f.default) : null;
    }
    // Numbered per parent in the create's transaction: two creates under one parent take 1 and 2.
    for (const s of sequences)
      row[s.field.name] = await ctx.store.sequences.next(`${resource.table}.${s.field.column}:${String(row[s.per])}`);
    if (resource.states && stateField) row[stateField] = resource.states.initial;
    await derived.insert(row);
    // The answer is serialised before the hooks run (none changes the row): when it shows the whole record, the
    // created event reuses its text.
    const hidden = ctx.access.hiddenFields(resource, input.principal);
    const answer = writer.serialize(writer.visibleTo(row, hidden));
    await runHooks(
      ctx,
      hidden.size === 0
        ? { kind: 'created', resource, after: row, actor: input.caller, json: answer, ...versionOf(input) }
        : { kind: 'created', resource, after: row, actor: input.caller, ...versionOf(input) },
    );
    const location = await pathOf(row, input.params);
    const headers = { location: `${ctx.plan.service.basePath}${location}` };
    // An answer with computed fields or in a view is not the event's record: it is read and written on its own.
    if (shapes.computes('create') || resource.answerViews.create || embedded.length)
      return respond(input, 'create', 201, row, headers);
    return answerWith(201, row, answer, headers);
  };

  // A read's computed fields come in the record's own query.
  const loadShown = createRecordLoader(ctx, resource, shapes.shapeOf('get').computed);
  const getShape = shapes.shapeOf('get');
  const get: Handler = async (input) => {
    const row = await loadShown(input);
    // The client's copy is current: 304 with the tag, no body (RFC 9110 §13.1.2).
    if (noneMatch(input.headers['if-none-match'], row)) return { status: 304, headers: { etag: etagOf(row) } };
    const references = mergeNames(embedded, parseExpand(resource, input.query, false));
    if (references.length) return respond(input, 'get', 200, row, undefined, true, references);
    // Nothing to embed: answered here, with no further promise.
    const visible = writer.visibleTo(row, ctx.access.hiddenFields(resource, input.principal));
    return answerWith(200, row, getShape.writer.serialize(visible));
  };

  const write = async (input: HandlerInput, op: 'update' | 'replace', next: Record<string, unknown>, current: Row) => {
    keepIntegerRefsAsText(next);
    const revision = expectRevision(input, current);
    ctx.access.authorize(resource, 'update', input.principal, current, input.body);
    if (owner && JSON.stringify(next[owner] ?? null) !== JSON.stringify(current[owner] ?? null)) throw readOnlyOwner();
    const editable = resource.states?.states.find((s) => s.name === current[stateField ?? ''])?.editable;
    const changes: Record<string, unknown> = {};
    for (const f of writable) {
      const before = JSON.stringify(current[f.name] ?? null);
      const after = JSON.stringify(next[f.name] ?? null);
      if (before !== after) changes[f.name] = next[f.name] ?? null;
    }
    if (editable) {
      const locked = Object.keys(changes).filter((name) => !editable.includes(name));
      if (locked.length) {
        throw new ApiError(
          'field_locked_in_state',
          `In state ${String(current[stateField ?? ''])} only ${editable.join(', ') || 'no field'} may change.`,
          locked.map((name) => ({
            pointer: `#/${name}`,
            code: 'field_locked_in_state',
            message: `${name} is locked in this state`,
          })),
        );
      }
    }
    if (checksReferences) await checkReferences(ctx, resource, changes, input.principal);
    await hashPasswords(changes);
    changes.updatedAt = ctx.now().toISOString();
    const row = await derived.update(current, changes, revision);
    if (!row)
      throw new ApiError('precondition_failed', 'The record changed while it was being written; read it again.');
    await runHooks(ctx, {
      kind: 'updated',
      resource,
      before: current,
      after: row,
      actor: input.caller,
      ...versionOf(input),
    });
    return respond(input, op, 200, row);
  };

  const update: Handler = async (input) => {
    rejectStateWrite(input.body);
    rejectLocked(input);
    const patch = normalizer.input(input.body);
    const invalid = validatePatch(patch);
    if (invalid) throw invalid;
    const current = await load(input);
    const merged = mergePatch(integerRefsAsNumbers(writableValues(current, false)), patch) as Record<string, unknown>;
    const whole = Object.fromEntries(Object.entries(merged).filter(([, v]) => v !== null && v !== undefined));
    const stillValid = validateCreate(whole);
    if (stillValid) throw stillValid;
    normalizer.arrays(merged);
    return write(input, 'update', merged, current);
  };

  const replace: Handler = async (input) => {
    rejectStateWrite(input.body);
    rejectLocked(input);
    const body = normalizer.input(input.body) as Record<string, unknown>;
    const invalid = validateCreate(body);
    if (invalid) throw invalid;
    const current = await load(input);
    const values = writableValues(body, true);
    normalizer.arrays(values);
    // A field the caller may not read or write is not the caller's to replace: left out, it keeps its value.
    const kept = [
      ...ctx.access.hiddenFields(resource, input.principal),
      ...ctx.access.unwritableFields(resource, input.principal),
    ];
    for (const name of kept) if (name in values && body[name] === undefined) values[name] = current[name] ?? null;
    bindParents(input, values);
    return write(input, 'replace', values, current);
  };

  const remove: Handler = async (input) => {
    const current = await load(input);
    const revision = expectRevision(input, current);
    ctx.access.authorize(resource, 'delete', input.principal, current, undefined);
    await releaseReferences(ctx, resource, current.id);
    if (!(await ctx.store.delete(resource.name, current.id, { revision }))) {
      throw new ApiError('precondition_failed', 'The record changed while it was being deleted; read it again.');
    }
    await runHooks(ctx, { kind: 'deleted', resource, before: current, actor: input.caller, ...versionOf(input) });
    return { status: 204 };
  };

  return { get, create, update, replace, remove };
};
