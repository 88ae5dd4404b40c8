import type {
  CustomEndpointPlan,
  ErrorsPlan,
  Operation,
  Plan,
  ResourcePlan,
  TransitionPlan,
} from '../../plan/types.ts';
import { type OpenApiComponents, type OpenApiObject, ref } from '../openapi-model.ts';
import { ApiError } from './api-error.ts';
import { createProblemRenderer } from './runtime.ts';

/** Every request can fail on our side, or on storage. */
export const ALWAYS = ['internal', 'busy', 'storage_unavailable'];
/** What the JSON body parser and the body validators answer. */
export const BODY = [
  'invalid_json',
  'forbidden_key',
  'too_deep',
  'bad_request',
  'payload_too_large',
  'unsupported_media_type',
  'validation_failed',
  'unknown_field',
  'read_only_field',
  'invalid_string',
  'number_out_of_range',
];
/** Unsafe methods run through the idempotency layer. */
export const IDEMPOTENCY = ['idempotency_key_invalid', 'idempotency_key_in_use', 'idempotency_key_reused'];
const LIST = ['invalid_query', 'invalid_filter', 'invalid_sort', 'invalid_cursor', 'limit_exceeded', 'invalid_expand'];

/** The catalogue codes one resource operation can answer, as the runtime raises them. */
export const resourceOperationErrors = (plan: Plan, resource: ResourcePlan, op: Operation): string[] => {
  const writes = [
    'invalid_reference',
    'unique_violation',
    ...(resource.states ? ['use_transition_endpoint'] : []),
    ...(resource.states?.states.some((s) => s.editable) ? ['field_locked_in_state'] : []),
  ];
  const restricted = plan.resources.some((r) =>
    r.fields.some((f) => f.ref?.to === resource.name && f.ref.onDelete === 'restrict'),
  );
  const codes: Record<Operation, string[]> = {
    list: LIST,
    get: ['not_found'],
    create: [...BODY, ...IDEMPOTENCY, ...writes.filter((c) => c !== 'field_locked_in_state')],
    update: ['not_found', 'precondition_failed', ...BODY, ...IDEMPOTENCY, ...writes],
    replace: ['not_found', 'precondition_failed', ...BODY, ...IDEMPOTENCY, ...writes],
    delete: ['not_found', 'precondition_failed', ...IDEMPOTENCY, ...(restricted ? ['reference_in_use'] : [])],
  };
  return [...codes[op], ...ALWAYS];
};

/** A transition endpoint: its input, the state machine's answers, If-Match and idempotency. */
export const transitionErrors = (t: TransitionPlan): string[] => [
  'not_found',
  'invalid_transition',
  ...(t.when ? ['transition_guard_failed'] : []),
  'precondition_failed',
  ...BODY.filter((c) => c !== 'read_only_field'),
  ...IDEMPOTENCY,
  ...ALWAYS,
];

/** A custom endpoint: its validated query and body, what its handler declares, and not_found on a path with ids. */
export const customEndpointErrors = (endpoint: CustomEndpointPlan): string[] => [
  ...(endpoint.query ? ['invalid_query'] : []),
  ...(endpoint.body ? BODY : []),
  ...(endpoint.method !== 'GET' ? IDEMPOTENCY : []),
  ...(endpoint.path.includes('{') ? ['not_found'] : []),
  ...endpoint.errors,
  ...ALWAYS,
];

export const errorMediaType = (errors: ErrorsPlan): string =>
  errors.format !== 'problem+json' && errors.payload !== undefined ? 'application/json' : 'application/problem+json';

const FIELD_ERROR: OpenApiObject = {
  type: 'object',
  description: 'One failing field of the request.',
  properties: {
    pointer: { type: 'string', description: 'JSON Pointer (URI fragment) into the body: #/lines/0/qty.' },
    code: { type: 'string', examples: ['required'] },
    message: { type: 'string' },
  },
  required: ['pointer', 'code', 'message'],
};

/** The extension members the runtime adds to some problems (the 4th argument of an ApiError), each typed. */
const PROBLEM_EXTENSIONS: Record<string, OpenApiObject> = {
  currentEtag: {
    type: 'string',
    description: '`precondition_failed`: the ETag the record has now; read it again, then retry with it.',
  },
  currentState: { type: 'string', description: '`invalid_transition`: the state the record is in.' },
  versions: {
    type: 'array',
    items: { type: 'string' },
    description: '`unsupported_version`, `version_sunset`: the API versions this service serves.',
  },
  allowedTransitions: {
    type: 'array',
    items: { type: 'string' },
    description: '`invalid_transition`: the transitions the record may take from its state.',
  },
  guard: { type: 'string', description: '`transition_guard_failed`: the condition that did not hold.' },
  field: {
    type: 'string',
    description: '`unique_violation`: the field whose value is already taken (the first of a key).',
  },
  fields: {
    type: 'array',
    items: { type: 'string' },
    description: '`unique_violation` of a compound unique key: every field of the key.',
  },
  maxLimit: { type: 'integer', description: '`limit_exceeded`: the largest page size allowed.' },
  param: {
    type: 'string',
    description: '`invalid_query`, `limit_exceeded` of a paging style other than cursor: the query parameter at fault.',
  },
  allow: { type: 'string', description: '`method_not_allowed`: the methods this path serves (as in `Allow`).' },
  resetAt: {
    type: 'string',
    format: 'date-time',
    description: '`quota_exceeded`: when the quota’s period ends and the caller may call again.',
  },
  'violated-policies': {
    type: 'array',
    items: { type: 'string' },
    description: '`rate_limited`, `quota_exceeded`: the policies (as named in `RateLimit-Policy`) the request is over.',
  },
  truncated: {
    type: 'boolean',
    description: '`validation_failed`, `unknown_field`: true when `errors` lists only some of the problems.',
  },
};

const problemSchema = (errors: ErrorsPlan): OpenApiObject => ({
  type: 'object',
  description: 'RFC 9457 problem details. Clients branch on `code`; extension members may follow.',
  properties: {
    type: { type: 'string', format: 'uri-reference', examples: [`${errors.typeBase}not_found`] },
    title: { type: 'string' },
    status: { type: 'integer', minimum: 400, maximum: 599 },
    code: { type: 'string', enum: [...errors.catalogue.keys()] },
    detail: { type: 'string' },
    instance: { type: 'string', description: 'The request path.' },
    errors: { type: 'array', items: ref('schemas', 'FieldError') },
    ...PROBLEM_EXTENSIONS,
  },
  required: ['type', 'title', 'status', 'code'],
});

const PLACEHOLDER_SCHEMAS: Record<string, OpenApiObject> = {
  status: { type: 'integer', minimum: 400, maximum: 599 },
  errors: { type: 'array', items: ref('schemas', 'FieldError') },
};

/** The JSON Schema of a payload template, as the renderer fills it (payload-template.ts). */
const payloadSchema = (template: unknown): OpenApiObject => {
  if (typeof template === 'string') {
    const whole = /^\{(\w+)\}$/.exec(template)?.[1];
    return (whole && PLACEHOLDER_SCHEMAS[whole]) || { type: 'string' };
  }
  if (Array.isArray(template))
    return { type: 'array', items: template[0] === undefined ? {} : payloadSchema(template[0]) };
  if (template && typeof template === 'object') {
    const node = template as Record<string, unknown>;
    if ('$each' in node)
      return {
        type: 'array',
        description: 'One entry per failing field.',
        items: payloadSchema(node.$each),
      };
    if ('$byField' in node)
      return {
        type: 'object',
        description:
          'Each failing field (or, for an error about no one field, the one key the format names) with its messages.',
        additionalProperties: { type: 'array', items: payloadSchema(node.$byField) },
      };
    const entries = Object.entries(node).filter(([k]) => !k.startsWith('$'));
    return {
      type: 'object',
      properties: Object.fromEntries(entries.map(([k, v]) => [k.endsWith('?') ? k.slice(0, -1) : k, payloadSchema(v)])),
      required: entries.filter(([k]) => !k.endsWith('?')).map(([k]) => k),
    };
  }
  if (typeof template === 'number') return { type: 'number' };
  if (typeof template === 'boolean') return { type: 'boolean' };
  return {};
};

/** One code's example, rendered by the server's own renderer, so it is what a client receives. */
const exampleError = (errors: ErrorsPlan, code: string): unknown => {
  const entry = errors.catalogue.get(code);
  const error = new ApiError(
    code,
    entry?.description ?? entry?.title ?? code,
    entry?.status === 422 ? [{ pointer: '#/name', code: 'required', message: 'name is required' }] : undefined,
  );
  return JSON.parse(createProblemRenderer(errors)(error, { instance: '/example/path', resource: 'Example' }).body);
};

/** Component names: the error schema, and one example and one response per catalogue code. */
export const errorSchemaName = (errors: ErrorsPlan) =>
  errorMediaType(errors) === 'application/json' ? 'ErrorPayload' : 'Problem';

/** Problem (or the custom payload), FieldError, and an example and a response for every catalogue code. */
export const errorComponents = (errors: ErrorsPlan): Pick<OpenApiComponents, 'schemas' | 'examples' | 'responses'> => {
  const schemaName = errorSchemaName(errors);
  const schemas: Record<string, OpenApiObject> = {
    FieldError: FIELD_ERROR,
    [schemaName]: schemaName === 'Problem' ? problemSchema(errors) : payloadSchema(errors.payload),
  };
  const examples: Record<string, OpenApiObject> = {};
  const responses: Record<string, OpenApiObject> = {};
  for (const [code, entry] of errors.catalogue) {
    examples[code] = { summary: `${entry.status} ${code}`, value: exampleError(errors, code) };
    responses[code] = {
      description: entry.title,
      headers: { 'X-Request-Id': ref('headers', 'X-Request-Id') },
      content: {
        [errorMediaType(errors)]: { schema: ref('schemas', schemaName), examples: { [code]: ref('examples', code) } },
      },
    };
  }
  return { schemas, examples, responses };
};

/** The error answers of one operation, by status: one code is a $ref, several share a response with an example each. */
export const errorResponses = (errors: ErrorsPlan, codes: readonly string[]): Record<string, OpenApiObject> => {
  const byStatus = new Map<number, string[]>();
  for (const code of new Set(codes)) {
    const entry = errors.catalogue.get(code);
    if (!entry) continue;
    byStatus.set(entry.status, [...(byStatus.get(entry.status) ?? []), code]);
  }
  const out: Record<string, OpenApiObject> = {};
  for (const status of [...byStatus.keys()].sort((a, b) => a - b)) {
    const group = byStatus.get(status) ?? [];
    const [only] = group;
    if (group.length === 1 && only) {
      out[String(status)] = ref('responses', only);
      continue;
    }
    out[String(status)] = {
      description: group.map((c) => `\`${c}\`: ${errors.catalogue.get(c)?.title ?? c}`).join('; '),
      headers: { 'X-Request-Id': ref('headers', 'X-Request-Id') },
      content: {
        [errorMediaType(errors)]: {
          schema: ref('schemas', errorSchemaName(errors)),
          examples: Object.fromEntries(group.map((c) => [c, ref('examples', c)])),
        },
      },
    };
  }
  return out;
};
