import type { ResourcePlan, WireNames } from '../../plan/types.ts';
import type { Handler, HandlerOutput } from '../../runtime/context.ts';
import { ApiError, type FieldError } from '../errors/api-error.ts';
import { createWireRecord, flatNames, fromWire } from './wire-names.ts';

export { createWireRecord, type WireRecord } from './wire-names.ts';

/** Renames the engine's field names quoted in a message (`firstName is read-only` → `first_name is read-only`). */
const createMessageNamer = (resource: ResourcePlan) => {
  const renamed = flatNames(resource.wire.names);
  if (renamed.size === 0) return (text: string) => text;
  const words = new RegExp(`\\b(${[...renamed.keys()].sort((a, b) => b.length - a.length).join('|')})\\b`, 'g');
  return (text: string) => text.replace(words, (word) => renamed.get(word) ?? word);
};

/**
 * Errors of a body in engine names, in wire names: pointers renamed and placed under the envelope, and the field
 * names that messages quote renamed. Anything else passes as it is.
 */
export const createWireErrors = (resource: ResourcePlan, underEnvelope: boolean) => {
  const { pointer, envelope } = resource.wire;
  const message = createMessageNamer(resource);
  const prefix = underEnvelope && envelope ? `/${envelope}` : '';
  const field = (e: FieldError): FieldError => ({
    ...e,
    pointer: pointer(e.pointer).replace(/^#/, `#${prefix}`),
    message: message(e.message),
  });
  return (error: unknown): unknown => {
    if (!(error instanceof ApiError)) return error;
    if (!error.errors?.length && !error.detail) return error;
    return new ApiError(
      error.code,
      error.detail === undefined ? undefined : message(error.detail),
      error.errors?.map(field),
      error.extensions,
      error.headers,
    );
  };
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Takes a body out of its envelope: `{"user": {...}}` → `{...}`; anything else is 422 with the envelope's pointer. */
const unwrap = (envelope: string, body: unknown): unknown => {
  if (!isObject(body)) return body;
  const extra = Object.keys(body).filter((k) => k !== envelope);
  if (extra.length)
    throw new ApiError(
      'validation_failed',
      `The body is one member, ${envelope}.`,
      extra.slice(0, 10).map((k) => ({
        pointer: `#/${k.replaceAll('~', '~0').replaceAll('/', '~1').slice(0, 64)}`,
        code: 'unknown_field',
        message: `${k.slice(0, 64)} is not a member of this body`,
      })),
    );
  const inner = body[envelope];
  if (inner === undefined)
    throw new ApiError('validation_failed', `The body is one member, ${envelope}.`, [
      { pointer: `#/${envelope}`, code: 'required', message: `${envelope} is required` },
    ]);
  if (!isObject(inner))
    throw new ApiError('validation_failed', `${envelope} must be an object.`, [
      { pointer: `#/${envelope}`, code: 'invalid_type', message: 'must be an object' },
    ]);
  return inner;
};

/**
 * Puts a record route on this resource's wire: the body taken out of its envelope and renamed to engine names, the
 * answer renamed, given its `object` and put in its envelope, and errors of the body renamed. A resource served in
 * the engine's own shape gets its handler back untouched.
 */
export const wireRecordRoute = (
  resource: ResourcePlan,
  handler: Handler,
  /** A transition's input: its own names, never in the record's envelope. */
  input?: { readonly names: WireNames },
): Handler => {
  const { wire } = resource;
  if (wire.plain) return handler;
  const record = createWireRecord(resource);
  const errors = createWireErrors(resource, input === undefined);
  const { envelope } = wire;
  const bodyNames = input?.names ?? wire.names;
  const bodyEnvelope = input === undefined ? envelope : undefined;
  const answer = (out: HandlerOutput): HandlerOutput => {
    if (out.body === undefined || out.status < 200 || out.status > 299) return out;
    const shown = record(JSON.parse(out.body) as Record<string, unknown>);
    return { ...out, body: JSON.stringify(envelope ? { [envelope]: shown } : shown) };
  };
  return async (request) => {
    // Refusals of the envelope and of engine-spelt keys already name what the client sent.
    const inner = bodyEnvelope ? unwrap(bodyEnvelope, request.body) : request.body;
    const body = fromWire(inner, bodyNames, bodyEnvelope ? `/${bodyEnvelope}` : '');
    try {
      return answer(await handler(body === request.body ? request : { ...request, body }));
    } catch (error) {
      throw errors(error);
    }
  };
};
