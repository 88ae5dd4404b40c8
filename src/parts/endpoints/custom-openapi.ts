import type { CustomEndpointPlan, Plan } from '../../plan/types.ts';
import { type OpenApiObject, pascalCase, ref, success } from '../openapi-model.ts';
import { exampleObject, exampleValue } from '../resources/example.ts';
import { fieldSchema, objectSchema } from '../resources/json-schema.ts';
import { defaultsInProse } from '../resources/openapi.ts';
import { pathParams } from './plan.ts';

const names = (endpoint: CustomEndpointPlan) => ({
  body: `${pascalCase(endpoint.name)}Body`,
  response: `${pascalCase(endpoint.name)}Response`,
});

const responseSchema = (endpoint: CustomEndpointPlan): OpenApiObject | undefined => {
  const fields = endpoint.response?.fields;
  if (!fields) return undefined;
  const item = objectSchema(fields, 'output', true);
  return endpoint.response?.list
    ? { type: 'object', properties: { data: { type: 'array', items: item } }, required: ['data'] }
    : item;
};

const responseExample = (plan: Plan, endpoint: CustomEndpointPlan): unknown => {
  const fields = endpoint.response?.fields;
  if (!fields) return undefined;
  const item = exampleObject(fields, 'output', plan.resourcesByName);
  return endpoint.response?.list ? { data: [item] } : item;
};

/** <Name>Body and <Name>Response of every custom endpoint that declares them. */
export const customComponents = (plan: Plan): Record<string, OpenApiObject> => {
  const out: Record<string, OpenApiObject> = {};
  for (const endpoint of plan.custom) {
    const n = names(endpoint);
    if (endpoint.body)
      out[n.body] = {
        ...(defaultsInProse(objectSchema(endpoint.body, 'input', true)) as OpenApiObject),
        examples: [exampleObject(endpoint.body, 'input', plan.resourcesByName)],
      };
    const schema = responseSchema(endpoint);
    if (schema) out[n.response] = { ...schema, examples: [responseExample(plan, endpoint)] };
  }
  return out;
};

/** One custom endpoint: its declared path and query parameters, body and response, and its error answers. */
export const customOperation = (
  plan: Plan,
  endpoint: CustomEndpointPlan,
  tag: string,
  errors: Record<string, OpenApiObject>,
): OpenApiObject => {
  const n = names(endpoint);
  const parameters: OpenApiObject[] = [
    ...pathParams(endpoint.path).map((name) => {
      const f = endpoint.params?.[name];
      return {
        name,
        in: 'path',
        required: true,
        ...(f?.description ? { description: f.description } : {}),
        schema: f ? fieldSchema(f, 'input', true) : { type: 'string' },
      };
    }),
    ...Object.entries(endpoint.query ?? {}).map(([name, f]) => ({
      name,
      in: 'query',
      required: f.required === true && f.default === undefined,
      ...(f.description ? { description: f.description } : {}),
      schema: fieldSchema(f, 'input', true),
      example: exampleValue(f, name, 'input', plan.resourcesByName),
    })),
    ref('parameters', 'RequestId'),
    ...(endpoint.method !== 'GET' ? [ref('parameters', 'IdempotencyKey')] : []),
  ];
  const status = String(endpoint.response?.status ?? 200);
  const schema = responseSchema(endpoint);
  const replayed = endpoint.method !== 'GET' ? ['Idempotent-Replayed'] : [];
  const responses: OpenApiObject = {
    [status]: success(
      endpoint.summary ?? 'Done.',
      schema ? ref('schemas', n.response) : undefined,
      responseExample(plan, endpoint),
      replayed,
    ),
    // A handler that returns nothing answers 204 when its status is 200.
    ...(!schema && status === '200' ? { '204': success('Done; no content.', undefined, undefined, replayed) } : {}),
    ...errors,
  };
  return {
    operationId: endpoint.name,
    ...(endpoint.summary ? { summary: endpoint.summary } : {}),
    tags: [tag],
    parameters,
    ...(endpoint.body
      ? {
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: ref('schemas', n.body),
                example: exampleObject(endpoint.body, 'input', plan.resourcesByName),
              },
            },
          },
        }
      : {}),
    responses,
  };
};
