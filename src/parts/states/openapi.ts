import type { Plan, ResourcePlan } from '../../plan/types.ts';
import { headerParams, type PathItem, pathParameters } from '../endpoints/openapi.ts';
import { objectNames, toWire } from '../endpoints/wire-names.ts';
import { exampleInEnvelope, inEnvelope, wireSchema } from '../endpoints/wire-openapi.ts';
import { errorResponses, transitionErrors } from '../errors/openapi.ts';
import { type OpenApiObject, pascalCase, ref, success } from '../openapi-model.ts';
import { exampleObject, exampleRecord } from '../resources/example.ts';
import { objectSchema } from '../resources/json-schema.ts';
import { withArticle } from '../resources/naming.ts';
import { resourceSchemaNames } from '../resources/openapi.ts';

/** The history page of a record's transitions. */
export const historySchema = (): OpenApiObject => ({
  type: 'object',
  required: ['data'],
  properties: {
    data: {
      type: 'array',
      items: {
        type: 'object',
        required: ['transition', 'from', 'to', 'at', 'input', 'actor'],
        properties: {
          transition: { type: 'string' },
          from: { type: 'string' },
          to: { type: 'string' },
          at: { type: 'string', format: 'date-time' },
          input: { description: 'The transition input as sent.' },
          actor: { type: 'string', description: "The caller's subject; `system` for timed transitions." },
        },
      },
    },
  },
});

/** One POST per transition and the GET history of each resource with a state machine. */
export const statePaths = (plan: Plan, resource: ResourcePlan): Record<string, PathItem> => {
  const machine = resource.states;
  if (!machine) return {};
  const base = plan.service.basePath;
  const record = ref('schemas', resourceSchemaNames(resource).record);
  const example = exampleRecord(resource, plan.resourcesByName);
  const params = [...pathParameters(plan, resource, true)];
  const out: Record<string, PathItem> = {};
  for (const t of machine.transitions) {
    const names = objectNames(resource.wire.naming, t.input ?? {});
    const input = wireSchema(objectSchema(t.input ?? {}, 'input', true), names);
    const stateName = resource.wire.names.out.get(machine.field)?.name ?? machine.field;
    const description = [
      t.description,
      `From ${t.from.join(' or ')} to ${t.to}.`,
      t.when ? `Guard: \`${t.when}\`.` : '',
      t.after ? `Also taken by the service ${t.after} after the record entered ${t.from.join(' or ')}.` : '',
    ]
      .filter(Boolean)
      .join(' ');
    out[`${base}${resource.itemPath}/${t.path}`] = {
      post: {
        operationId: `${t.name}${pascalCase(resource.name)}`,
        summary: `${pascalCase(t.name)} ${withArticle(resource.name)} (${t.from.join('|')} → ${t.to})`,
        description,
        tags: [resource.name],
        parameters: [...params, ...headerParams('IfMatch', 'IdempotencyKey', 'RequestId')],
        // The input travels as an optional JSON body (required when a field of it is): `{}` when there is none.
        requestBody: {
          required: Array.isArray(input.required) && input.required.length > 0,
          content: {
            'application/json': {
              schema: input,
              example: toWire(exampleObject(t.input ?? {}, 'input', plan.resourcesByName), names),
            },
          },
        },
        responses: {
          '200': success(
            `The ${resource.name}, now ${t.to}.`,
            inEnvelope(resource, record),
            exampleInEnvelope(resource, { ...example, [stateName]: t.to }),
            ['ETag', 'Idempotent-Replayed'],
          ),
          ...errorResponses(plan.errors, transitionErrors(t)),
        },
      },
    };
  }
  out[`${base}${resource.itemPath}/history`] = {
    get: {
      operationId: `get${pascalCase(resource.name)}History`,
      summary: `The transitions ${withArticle(resource.name)} took, oldest first`,
      tags: [resource.name],
      parameters: [...params, ...headerParams('RequestId')],
      responses: {
        '200': success('The history.', ref('schemas', 'TransitionHistory'), {
          data: machine.transitions.slice(0, 1).map((t) => ({
            transition: t.name,
            from: t.from[0],
            to: t.to,
            at: '2026-01-15T09:30:00.000Z',
            input: {},
            actor: 'system',
          })),
        }),
        ...errorResponses(plan.errors, ['not_found', 'internal', 'busy', 'storage_unavailable']),
      },
    },
  };
  return out;
};
