import { FieldSchema } from '../parts/resources/field-schema.ts';
import { ServiceSpecSchema } from './schema.ts';

const SCHEMA_ID = 'https://ninefold.dev/schema/ninefold.schema.json';

/** Rewrites TypeBox's `$ref: "Field"` into `#/$defs/Field` so editors resolve it without a registry. */
const hoistRefs = (node: unknown): unknown => {
  if (Array.isArray(node)) return node.map(hoistRefs);
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === '$ref' && value === 'Field') out[key] = '#/$defs/Field';
    else if (key === '$id' && value === 'Field') continue;
    else out[key] = hoistRefs(value);
  }
  return out;
};

/** The published JSON Schema of the spec language, derived from the one definition in schema.ts. */
export const buildJsonSchema = (): Record<string, unknown> => {
  const root = hoistRefs(JSON.parse(JSON.stringify(ServiceSpecSchema))) as Record<string, unknown>;
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id: SCHEMA_ID,
    ...root,
    $defs: { Field: hoistRefs(JSON.parse(JSON.stringify(FieldSchema))) },
  };
};
