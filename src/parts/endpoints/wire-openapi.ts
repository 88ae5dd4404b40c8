import type { ResourcePlan, WireNames } from '../../plan/types.ts';
import type { OpenApiObject } from '../openapi-model.ts';

const isObject = (v: unknown): v is OpenApiObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A JSON Schema of engine names in the wire's names: `properties` and `required` renamed at each level, into
 * nested objects, array items and `anyOf` branches (a nullable object).
 */
export const wireSchema = (schema: OpenApiObject, names: WireNames): OpenApiObject => {
  if (names.out.size === 0) return schema;
  const out: OpenApiObject = { ...schema };
  if (isObject(schema.items)) out.items = wireSchema(schema.items, names);
  if (Array.isArray(schema.anyOf))
    out.anyOf = schema.anyOf.map((branch) => (isObject(branch) ? wireSchema(branch, names) : branch));
  if (isObject(schema.properties))
    out.properties = Object.fromEntries(
      Object.entries(schema.properties).map(([name, property]) => {
        const entry = names.out.get(name);
        if (!entry) return [name, property];
        return [entry.name, entry.inner && isObject(property) ? wireSchema(property, entry.inner) : property];
      }),
    );
  if (Array.isArray(schema.required))
    out.required = schema.required.map((name) => names.out.get(String(name))?.name ?? name);
  return out;
};

/** A record's schema as the wire answers it: renamed, and with its constant `object` member after the id. */
export const wireRecordSchema = (resource: ResourcePlan, schema: OpenApiObject): OpenApiObject => {
  const renamed = wireSchema(schema, resource.wire.names);
  const object = resource.object;
  if (object === undefined || !isObject(renamed.properties)) return renamed;
  const { id, ...rest } = renamed.properties;
  const member = {
    type: 'string',
    const: object,
    enum: [object],
    readOnly: true,
    description: 'What this record is; always the same.',
  };
  const required = Array.isArray(renamed.required) ? renamed.required : [];
  return {
    ...renamed,
    properties: { ...(id === undefined ? {} : { id }), object: member, ...rest },
    required: [...required.slice(0, 1), 'object', ...required.slice(1)],
  };
};

/** The single-record envelope around a schema (`{"user": <schema>}`), or the schema itself. */
export const inEnvelope = (resource: ResourcePlan, schema: OpenApiObject): OpenApiObject => {
  const envelope = resource.wire.envelope;
  return envelope
    ? { type: 'object', properties: { [envelope]: schema }, required: [envelope], additionalProperties: false }
    : schema;
};

/** An example in the single-record envelope. */
export const exampleInEnvelope = (resource: ResourcePlan, example: unknown): unknown =>
  resource.wire.envelope ? { [resource.wire.envelope]: example } : example;
