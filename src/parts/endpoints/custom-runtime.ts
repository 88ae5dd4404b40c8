import { resolve } from 'node:path';
import type { CustomEndpointPlan } from '../../plan/types.ts';
import type { Handler, RuntimeContext } from '../../runtime/context.ts';
import { compileBodyValidator } from '../../runtime/validator.ts';
import { importModule } from '../../spec/import-module.ts';
import { ANONYMOUS, type Principal } from '../auth/principal.ts';
import { ApiError } from '../errors/api-error.ts';
import type { EmitDeclared } from '../events/declared.ts';
import { objectSchema } from '../resources/json-schema.ts';
import { coerceQuery } from './coerce-query.ts';
import type { RecordDoorFactory, RecordDoors } from './record-door.ts';

/**
 * What a custom handler receives. Records are reached only through `records`, as the caller: the resource names
 * type it (`CustomContext<'Order' | 'Customer'>` gives `ctx.records.Order`).
 */
export interface CustomContext<Resource extends string = string> {
  readonly params: Record<string, unknown>;
  readonly query: Record<string, unknown>;
  readonly body: unknown;
  /**
   * Every resource, under the caller's rules: `get` answers undefined for a record the caller may not read (answer
   * 404 as for a missing one), `list` holds only readable records, writes run the generated endpoints' code.
   */
  readonly records: RecordDoors<Resource>;
  /** The caller's subject; '' for anonymous. */
  readonly caller: string;
  /** The authenticated caller (subject, roles, scheme, claims); anonymous on a public endpoint without credentials. */
  readonly principal: Principal;
  /** The request's headers, names in lower case. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /**
   * Aborted when the request runs past its time budget (limits.timeouts.endpoints, else .request): the caller has been answered
   * 503 `timeout` and nothing the handler writes from then on commits. Pass it to fetch and other slow work.
   */
  readonly signal: AbortSignal;
  /** Fails the request with a catalogued error code. */
  fail(code: string, detail?: string): never;
  /**
   * Writes an event declared under `events.declared`, whose payload must have the declared shape. In a POST,
   * PUT, PATCH or DELETE handler it commits or rolls back with the handler's writes.
   */
  emit(type: string, payload: Readonly<Record<string, unknown>>): Promise<void>;
}

const NEVER = new AbortController().signal;

// biome-ignore lint/suspicious/noExplicitAny: a handler may name its resources (CustomContext<'Order'>)
export type CustomHandler = (ctx: CustomContext<any>) => unknown | Promise<unknown>;

/** Loads the handler module named by the spec and wraps it with request and response validation. */
export const compileCustomHandler = async (
  ctx: RuntimeContext,
  endpoint: CustomEndpointPlan,
  emit: EmitDeclared,
  doors: RecordDoorFactory,
): Promise<Handler> => {
  const mod = await importModule(resolve(ctx.plan.dir, endpoint.handler.module));
  const fn = mod[endpoint.handler.export];
  if (typeof fn !== 'function')
    throw new Error(`${endpoint.handler.module} does not export ${endpoint.handler.export}`);
  const validateBody = endpoint.body
    ? compileBodyValidator(ctx.schemas, objectSchema(endpoint.body, 'input'))
    : undefined;
  const validateQuery = endpoint.query
    ? compileBodyValidator(ctx.schemas, objectSchema(endpoint.query, 'input'))
    : undefined;
  const responseSchema = endpoint.response?.fields
    ? endpoint.response.list
      ? {
          type: 'object',
          properties: { data: { type: 'array', items: objectSchema(endpoint.response.fields, 'input') } },
          required: ['data'],
        }
      : objectSchema(endpoint.response.fields, 'input')
    : undefined;
  const validateResponse = responseSchema ? ctx.schemas.later((ajv) => ajv.compile(responseSchema)) : undefined;
  const status = endpoint.response?.status ?? 200;
  const fail = (code: string, detail?: string): never => {
    throw new ApiError(code, detail);
  };
  return async (input) => {
    const query = endpoint.query ? coerceQuery(endpoint.query, input.query) : {};
    const queryError = validateQuery?.(query);
    if (queryError) throw new ApiError('invalid_query', queryError.detail, queryError.errors);
    if (validateBody) {
      const bodyError = validateBody(input.body);
      if (bodyError) throw bodyError;
    }
    const result = await (fn as CustomHandler)({
      params: { ...input.params },
      query,
      body: input.body,
      headers: input.headers,
      get signal() {
        return input.deadline?.signal ?? NEVER;
      },
      records: doors.for(input),
      caller: input.caller,
      principal: input.principal ?? ANONYMOUS,
      fail,
      emit,
    });
    if (validateResponse && !validateResponse()(result)) {
      throw new Error(`custom endpoint ${endpoint.name} returned a response that does not match its declared shape`);
    }
    if (result === undefined) return { status: status === 200 ? 204 : status };
    return { status, body: JSON.stringify(result), headers: { 'content-type': 'application/json; charset=utf-8' } };
  };
};
