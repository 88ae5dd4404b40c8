import type { Operation, Plan, ResourcePlan, SessionPlan } from '../../plan/types.ts';
import { ALWAYS, errorResponses } from '../errors/openapi.ts';
import { type OpenApiObject, ref, success } from '../openapi-model.ts';
import { recordSchema, viewSchema } from '../resources/json-schema.ts';
import { answerOf } from '../resources/view-openapi.ts';
import { exampleInEnvelope, inEnvelope, wireRecordSchema } from './wire-openapi.ts';

/** A token shaped like the ones the service signs (three base64url parts), for examples only. */
const TOKEN_EXAMPLE =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIwMUpENyIsImV4cCI6MTc5NTgxOTU5MH0.c2lnbmF0dXJlLWV4YW1wbGU';

const hours = (ms: number) => `${Math.round(ms / 3_600_000)} h`;

/**
 * An answer of a session resource (sign-up, sign-in, the caller's own record): the record or its view, as the
 * wire shows it, with a fresh token. Inline, since the record and view schemas admit no other member.
 */
export const withSessionToken = (
  plan: Plan,
  resource: ResourcePlan,
  session: SessionPlan,
  op: Operation,
): { schema: OpenApiObject; example: unknown } => {
  const word = plan.auth.schemes.get(session.scheme)?.scheme ?? 'Bearer';
  const view = resource.views.get(resource.answerViews[op] ?? '');
  const base = wireRecordSchema(resource, view ? viewSchema(resource, view, true) : recordSchema(resource, true));
  const { example } = answerOf(resource, op, plan.resourcesByName);
  const required = Array.isArray(base.required) ? base.required : [];
  return {
    schema: {
      ...base,
      properties: {
        ...(base.properties as OpenApiObject),
        [session.field]: {
          type: 'string',
          readOnly: true,
          description: `A JWT for this user, good for ${hours(session.expiresInMs)}: send it as \`Authorization: ${word} <token>\`.`,
        },
      },
      required: [...required, session.field],
    },
    example: { ...example, [session.field]: TOKEN_EXAMPLE },
  };
};

/** POST <signIn>: the identifier and password in, the user's own record with a token out. */
export const signInOperation = (plan: Plan, resource: ResourcePlan, session: SessionPlan): OpenApiObject => {
  const credentials: OpenApiObject = {
    type: 'object',
    properties: {
      [session.identifier]: { type: 'string' },
      [session.password]: { type: 'string', format: 'password', writeOnly: true },
    },
    required: [session.identifier, session.password],
  };
  const example = { [session.identifier]: 'ann@example.com', [session.password]: 'correct horse battery staple' };
  const tokened = withSessionToken(plan, resource, session, 'get');
  return {
    operationId: `signIn${resource.name}`,
    summary: `Sign in as ${resource.name === 'User' ? 'a user' : `a ${resource.name}`}`,
    description:
      'Checks the password. An unknown user and a wrong password get the same answer after the same work; failures count per identifier and per client address, and past the limit the answer is 429.',
    tags: [resource.name],
    parameters: [ref('parameters', 'RequestId')],
    requestBody: {
      required: true,
      content: {
        'application/json': {
          schema: inEnvelope(resource, credentials),
          example: exampleInEnvelope(resource, example),
        },
      },
    },
    responses: {
      '200': success(
        `The ${resource.name}, with a token.`,
        inEnvelope(resource, tokened.schema),
        exampleInEnvelope(resource, tokened.example),
      ),
      ...errorResponses(plan.errors, [
        'invalid_json',
        'unsupported_media_type',
        'payload_too_large',
        'validation_failed',
        'invalid_credentials',
        'too_many_requests',
        ...ALWAYS,
      ]),
    },
  };
};
