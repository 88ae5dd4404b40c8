import type { ComputedFieldPlan, FieldPlan, ResourcePlan, ViewPlan } from '../../plan/types.ts';
import { derivedSentence, normalizedSentence } from './field-notes.ts';
import type { FieldSpec } from './field-schema.ts';
import { rangeProblem } from './value-problem.ts';

export type JsonSchema = Record<string, unknown>;

/** The exact range of a JSON number (I-JSON): integers beyond it must travel as decimal strings. */
export const MAX_SAFE = Number.MAX_SAFE_INTEGER;

const decimalPattern = (f: FieldSpec) => {
  const scale = f.scale ?? 2;
  const intDigits = Math.max(1, (f.precision ?? 18) - scale);
  return scale === 0 ? `^-?\\d{1,${intDigits}}$` : `^-?\\d{1,${intDigits}}(\\.\\d{1,${scale}})?$`;
};

type DecimalBounds = { readonly min?: number; readonly max?: number };

/** ajv reads a validating function's errors from the function itself. */
const validateDecimalRange: ((bounds: DecimalBounds, data: string) => boolean) & { errors?: object[] } = (
  bounds,
  data,
) => {
  const problem = rangeProblem(bounds, data);
  // Reported as `minimum`/`maximum`, so a decimal out of range answers like a number out of range.
  const [keyword, comparison, limit] = problem?.startsWith('is below')
    ? (['minimum', '>=', bounds.min] as const)
    : (['maximum', '<=', bounds.max] as const);
  validateDecimalRange.errors = problem
    ? [{ keyword, message: `must be ${comparison} ${limit}`, params: { comparison, limit } }]
    : [];
  return problem === undefined;
};

/**
 * Decimals travel as strings, which `minimum` and `maximum` do not bound: this ajv keyword bounds them, compared
 * exactly. It sits in request validators only; documents say the bounds in prose (see `described`).
 */
export const decimalRangeKeyword = {
  keyword: 'decimalRange',
  type: 'string',
  schemaType: 'object',
  errors: true,
  validate: validateDecimalRange,
} as const;

/** `min 0, max 100` of a decimal as a sentence for documents, where no JSON Schema keyword can say it. */
const decimalBounds = (f: FieldSpec): string | undefined => {
  if (f.type !== 'decimal' || (f.min === undefined && f.max === undefined)) return undefined;
  if (f.min !== undefined && f.max !== undefined) return `From ${f.min} to ${f.max}, compared as decimals.`;
  return f.min !== undefined ? `At least ${f.min}, compared as decimals.` : `At most ${f.max}, compared as decimals.`;
};

const withNull = (schema: JsonSchema, nullable: boolean): JsonSchema => {
  if (!nullable) return schema;
  if (Array.isArray(schema.enum)) return { ...schema, type: ['string', 'null'], enum: [...schema.enum, null] };
  if (typeof schema.type === 'string') return { ...schema, type: [schema.type, 'null'] };
  return { anyOf: [schema, { type: 'null' }] };
};

/** The field's description, with how the service sets or rewrites it, and who may read and write it. */
const descriptionOf = (f: FieldSpec): string | undefined => {
  const roles = (verb: string, list: readonly string[] | undefined) =>
    list?.length ? `Only roles ${list.join(', ')} may ${verb} this field.` : undefined;
  const text = [
    f.description,
    decimalBounds(f),
    derivedSentence(f),
    normalizedSentence(f),
    roles('see', f.readableBy),
    roles('set', f.writableBy),
  ]
    .filter(Boolean)
    .join(' ');
  return text || undefined;
};

const described = (f: FieldSpec, schema: JsonSchema, forDocs: boolean): JsonSchema => {
  if (!forDocs) return schema;
  const description = descriptionOf(f);
  return {
    ...schema,
    ...(description ? { description } : {}),
    ...(f.example !== undefined ? { examples: [f.example] } : {}),
    ...(f.default !== undefined ? { default: f.default } : {}),
    ...(f.readOnly ? { readOnly: true } : {}),
    ...(f.writeOnly ? { writeOnly: true } : {}),
  };
};

/**
 * The JSON Schema of one field's value. `mode: 'input'` carries every constraint (validation);
 * `mode: 'output'` only the types (fast serialisation); `docs` adds descriptions and examples (OpenAPI).
 */
export const fieldSchema = (f: FieldSpec, mode: 'input' | 'output', docs = false): JsonSchema => {
  const input = mode === 'input';
  const base = (): JsonSchema => {
    switch (f.type) {
      case 'string':
        return {
          type: 'string',
          ...(input || docs
            ? {
                ...(f.minLength !== undefined ? { minLength: f.minLength } : {}),
                ...(f.maxLength !== undefined ? { maxLength: f.maxLength } : {}),
                ...(f.format && f.format !== 'pattern' ? { format: f.format } : {}),
                ...(f.pattern ? { pattern: f.pattern } : {}),
              }
            : {}),
        };
      case 'integer':
        return {
          type: 'integer',
          ...(input || docs ? { minimum: f.min ?? -MAX_SAFE, maximum: f.max ?? MAX_SAFE } : {}),
        };
      case 'number':
        return {
          type: 'number',
          ...(input || docs
            ? { ...(f.min !== undefined ? { minimum: f.min } : {}), ...(f.max !== undefined ? { maximum: f.max } : {}) }
            : {}),
        };
      case 'decimal':
        return {
          type: 'string',
          ...(input || docs ? { pattern: decimalPattern(f) } : {}),
          ...(docs ? { format: 'decimal' } : {}),
          ...(input && !docs && (f.min !== undefined || f.max !== undefined)
            ? {
                decimalRange: {
                  ...(f.min !== undefined ? { min: f.min } : {}),
                  ...(f.max !== undefined ? { max: f.max } : {}),
                },
              }
            : {}),
        };
      case 'boolean':
        return { type: 'boolean' };
      case 'date':
        return { type: 'string', ...(input || docs ? { format: 'date' } : {}) };
      case 'datetime':
        return { type: 'string', ...(input || docs ? { format: 'date-time' } : {}) };
      case 'enum':
        return { type: 'string', enum: [...(f.values ?? [])] };
      case 'ref':
        return {
          type: 'string',
          ...(input || docs ? { minLength: 1, maxLength: 255 } : {}),
          ...(docs && f.to ? { 'x-ref': f.to } : {}),
        };
      case 'json':
        return {};
      case 'array':
        return {
          type: 'array',
          items: f.items ? fieldSchema(f.items, mode, docs) : {},
          ...(input || docs
            ? {
                ...(f.minItems !== undefined ? { minItems: f.minItems } : {}),
                ...(f.maxItems !== undefined ? { maxItems: f.maxItems } : {}),
                ...(f.uniqueItems ? { uniqueItems: true } : {}),
              }
            : {}),
        };
      case 'object':
        return objectSchema(f.fields ?? {}, mode, docs);
    }
  };
  return described(f, withNull(base(), f.nullable === true), docs);
};

/** An object of fields (nested objects, transition inputs, custom payloads). */
export const objectSchema = (
  fields: Readonly<Record<string, FieldSpec>>,
  mode: 'input' | 'output',
  docs = false,
): JsonSchema => {
  const entries = Object.entries(fields).filter(
    ([, f]) => !(mode === 'output' && f.writeOnly) && !(mode === 'input' && f.readOnly),
  );
  const required = entries
    .filter(([, f]) => f.required && (mode === 'output' || f.default === undefined))
    .map(([n]) => n);
  return {
    type: 'object',
    properties: Object.fromEntries(entries.map(([n, f]) => [n, fieldSchema(f, mode, docs)])),
    ...(required.length ? { required } : {}),
    additionalProperties: false,
  };
};

/**
 * A field's schema as the plan types it: a reference to a resource with integer ids is a JSON integer (its target
 * known only here, not in the field's own spec).
 */
export const fieldPlanSchema = (f: FieldPlan, mode: 'input' | 'output', docs = false, spec = f.spec): JsonSchema => {
  if (f.ref?.idStyle !== 'integer') return fieldSchema(spec, mode, docs);
  const schema = fieldSchema({ ...spec, type: 'integer', min: 1 }, mode, docs);
  return docs ? { ...schema, 'x-ref': f.ref.to } : schema;
};

/** The id as a resource's style writes it. */
export const idSchema = (resource: Pick<ResourcePlan, 'idStyle'>): JsonSchema =>
  resource.idStyle === 'integer'
    ? { type: 'integer' }
    : resource.idStyle === 'uuidv7'
      ? { type: 'string', format: 'uuid' }
      : { type: 'string' };

const SYSTEM_OUTPUT = {
  id: { type: 'string' },
  createdAt: { type: 'string', format: 'date-time' },
  updatedAt: { type: 'string', format: 'date-time' },
};

/** A computed field's value: read-only, never sent by a client. */
export const computedSchema = (c: ComputedFieldPlan, docs: boolean): JsonSchema => ({
  type: c.type,
  ...(docs
    ? {
        readOnly: true,
        description: `${c.description ? `${c.description} ` : ''}Computed for the caller: \`${c.cel}\`.`,
      }
    : {}),
});

/** A record as clients receive it: id, the readable fields, its computed fields, createdAt, updatedAt. */
export const recordSchema = (resource: ResourcePlan, docs = false): JsonSchema => {
  const fields = resource.fields.filter((f) => !f.writeOnly);
  return {
    type: 'object',
    properties: {
      id: idSchema(resource),
      ...Object.fromEntries(fields.map((f) => [f.name, fieldPlanSchema(f, 'output', docs)])),
      ...Object.fromEntries(resource.computed.map((c) => [c.name, computedSchema(c, docs)])),
      createdAt: SYSTEM_OUTPUT.createdAt,
      updatedAt: SYSTEM_OUTPUT.updatedAt,
    },
    // Serialisers only require the system fields: a record stored before a field became required still serialises.
    required: ['id', ...(docs ? fields.filter((f) => f.required).map((f) => f.name) : []), 'createdAt', 'updatedAt'],
    additionalProperties: false,
  };
};

/** A view of a resource as clients receive it: its fields, then its computed fields (always present). */
export const viewSchema = (resource: ResourcePlan, view: ViewPlan, docs = false): JsonSchema => {
  const shown = view.fields.filter((name) => !resource.fieldsByName.get(name)?.writeOnly);
  const property = (name: string): JsonSchema => {
    const field = resource.fieldsByName.get(name);
    if (field) return fieldPlanSchema(field, 'output', docs);
    return name === 'id' ? idSchema(resource) : (SYSTEM_OUTPUT[name as keyof typeof SYSTEM_OUTPUT] as JsonSchema);
  };
  const required = docs
    ? shown.filter((n) => !resource.fieldsByName.has(n) || resource.fieldsByName.get(n)?.required)
    : [];
  return {
    type: 'object',
    ...(docs && view.description ? { description: view.description } : {}),
    properties: {
      ...Object.fromEntries(shown.map((n) => [n, property(n)])),
      ...Object.fromEntries(view.computed.map((c) => [c.name, computedSchema(c, docs)])),
    },
    required: [...required, ...view.computed.map((c) => c.name)],
    additionalProperties: false,
  };
};

/** Fields a client may write. */
export const writableFields = (resource: ResourcePlan): FieldPlan[] => resource.fields.filter((f) => !f.readOnly);

/**
 * The body of a create (or a PUT): writable fields, required ones without a default required.
 * For a nested collection the parent reference comes from the path, so it is not required in the body.
 */
export const createSchema = (resource: ResourcePlan, docs = false): JsonSchema => {
  const fromPath = new Set(resource.parentParams.map((p) => p.field));
  const fields = writableFields(resource);
  const required = fields.filter((f) => f.required && !f.hasDefault && !fromPath.has(f.name)).map((f) => f.name);
  return {
    type: 'object',
    properties: Object.fromEntries(fields.map((f) => [f.name, fieldPlanSchema(f, 'input', docs)])),
    ...(required.length ? { required } : {}),
    additionalProperties: false,
  };
};

/** A JSON Merge Patch (RFC 7396): every writable field optional; null clears a field that is not required. */
export const patchSchema = (resource: ResourcePlan, docs = false): JsonSchema => ({
  type: 'object',
  properties: Object.fromEntries(
    writableFields(resource).map((f) => [
      f.name,
      fieldPlanSchema(f, 'input', docs, { ...f.spec, nullable: f.spec.nullable || !f.required }),
    ]),
  ),
  additionalProperties: false,
});
