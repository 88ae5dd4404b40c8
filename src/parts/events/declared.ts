import type { ValidateFunction } from 'ajv';
import type { RuntimeContext } from '../../runtime/context.ts';
import { objectSchema } from '../resources/json-schema.ts';

/** Writes a declared event: `type` is a name under `events.declared`, `payload` has its declared shape. */
export type EmitDeclared = (type: string, payload: Readonly<Record<string, unknown>>) => Promise<void>;

/**
 * The emitter custom handlers reach as `ctx.emit`. Each declared event's payload schema is compiled once; an
 * emit appends to the outbox on the writing connection, so inside an unsafe (POST, PUT, PATCH, DELETE)
 * handler the event commits or rolls back with the handler's writes (in a GET handler it is written in a
 * transaction of its own). A type that is not declared, or a
 * payload of the wrong shape, is the handler's mistake: it throws, the request ends as a 500 and nothing is
 * written. The event's data is the payload itself.
 */
export const declaredEmitter = (ctx: RuntimeContext): EmitDeclared => {
  const validators = new Map<string, () => ValidateFunction>(
    [...ctx.plan.events.declared].map(([type, e]) => [
      type,
      ctx.schemas.later((ajv) => ajv.compile(objectSchema(e.payload, 'output'))),
    ]),
  );
  return async (type, payload) => {
    const validate = validators.get(type)?.();
    if (!validate) throw new Error(`emit: ${type} is not an event declared under events.declared`);
    if (!validate(payload)) {
      const first = validate.errors?.[0];
      throw new Error(
        `emit: the ${type} payload does not match its declared shape (${first?.instancePath || '/'} ${first?.message})`,
      );
    }
    await ctx.store.events.append({ type, time: ctx.now().toISOString(), data: { ...payload } });
  };
};
