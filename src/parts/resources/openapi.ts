import type { ResourcePlan } from '../../plan/types.ts';
import { pageSchema } from '../endpoints/page-openapi.ts';
import { wireRecordSchema, wireSchema } from '../endpoints/wire-openapi.ts';
import { type OpenApiObject, pascalCase, ref } from '../openapi-model.ts';
import { exampleCreate, exampleRecord } from './example.ts';
import { createSchema, idSchema, patchSchema, recordSchema } from './json-schema.ts';
import { withArticle } from './naming.ts';
import { answerOf, viewComponentName, viewComponents, withEmbedded } from './view-openapi.ts';

/** Component names of one resource's schemas. */
export const resourceSchemaNames = (resource: ResourcePlan) => ({
  record: resource.name,
  create: `${resource.name}Create`,
  patch: `${resource.name}Patch`,
  page: `${resource.name}Page`,
  /** A record as a list answers it, where `expand` may have replaced references by the records they name. */
  listed: resource.answerViews.list
    ? viewComponentName(resource, resource.answerViews.list)
    : resource.list.expand.length
      ? `${resource.name}Listed`
      : resource.name,
});

/** The record schema with the plan's view of each field: the state field is read-only and set by transitions. */
const documentedRecord = (resource: ResourcePlan, exampleId: unknown): OpenApiObject => {
  const schema = recordSchema(resource, true);
  const properties = { ...(schema.properties as Record<string, OpenApiObject>) };
  properties.id = { ...idSchema(resource), readOnly: true, examples: [exampleId] };
  properties.createdAt = { type: 'string', format: 'date-time', readOnly: true };
  properties.updatedAt = { type: 'string', format: 'date-time', readOnly: true };
  for (const f of resource.fields) {
    const p = properties[f.name];
    if (p && f.readOnly) properties[f.name] = { ...p, readOnly: true };
    if (p && f.isState) properties[f.name] = { ...p, description: 'The state; changed only by transitions.' };
  }
  return wireRecordSchema(resource, {
    ...schema,
    properties,
    ...(resource.description ? { description: resource.description } : {}),
  });
};

/** The `<Resource>` component, a record as the API returns it, with an example: shared with the AsyncAPI document. */
export const recordComponent = (
  resource: ResourcePlan,
  resources: ReadonlyMap<string, ResourcePlan>,
): OpenApiObject => {
  const example = exampleRecord(resource, resources);
  return { ...documentedRecord(resource, example.id), examples: [example] };
};

/**
 * Request schemas state defaults in prose: generators (openapi-typescript) read `default` as "always present",
 * which holds for records but would make a client send every defaulted field.
 */
export const defaultsInProse = (schema: unknown): unknown => {
  if (Array.isArray(schema)) return schema.map(defaultsInProse);
  if (!schema || typeof schema !== 'object') return schema;
  const { default: value, ...rest } = schema as OpenApiObject;
  const walk = ([k, v]: [string, unknown]): [string, unknown] => {
    if (k === 'properties' && v && typeof v === 'object')
      return [k, Object.fromEntries(Object.entries(v).map(([name, p]) => [name, defaultsInProse(p)]))];
    return [k, k === 'examples' || k === 'enum' ? v : defaultsInProse(v)];
  };
  const out = Object.fromEntries(Object.entries(rest).map(walk));
  if (value === undefined) return out;
  const note = `Defaults to ${JSON.stringify(value)}.`;
  return { ...out, description: out.description ? `${String(out.description)} ${note}` : note };
};

/** <Resource>, <Resource>Create, <Resource>Patch and <Resource>Page (and <Resource>Listed with expand). */
export const resourceComponents = (
  resource: ResourcePlan,
  resources: ReadonlyMap<string, ResourcePlan>,
): Record<string, OpenApiObject> => {
  const names = resourceSchemaNames(resource);
  const example = exampleRecord(resource, resources);
  const record = documentedRecord(resource, example.id);
  const answered = withEmbedded(resource, record, example, resources);
  const out: Record<string, OpenApiObject> = {
    [names.record]: { ...answered.schema, examples: [answered.example] },
    [names.create]: {
      ...wireSchema(defaultsInProse(createSchema(resource, true)) as OpenApiObject, resource.wire.names),
      description: `The body of a create${resource.operations.has('replace') ? ' or a replace (PUT)' : ''}.`,
      examples: [exampleCreate(resource, resources)],
    },
    [names.patch]: {
      ...wireSchema(defaultsInProse(patchSchema(resource, true)) as OpenApiObject, resource.wire.names),
      description: 'A JSON Merge Patch (RFC 7396): only the fields to change; null clears an optional field.',
    },
  };
  Object.assign(out, viewComponents(resource, resources));
  if (names.listed === `${resource.name}Listed`) {
    const properties = { ...(answered.schema.properties as Record<string, OpenApiObject>) };
    for (const name of resource.list.expand) {
      if (resource.fieldsByName.get(name)?.ref?.embed) continue;
      const to = resource.fieldsByName.get(name)?.ref;
      const target = to && resources.get(to.to);
      const wire = resource.wire.names.out.get(name)?.name ?? name;
      const p = properties[wire];
      // An expanded reference is shown as the view the field names, or as the whole record.
      const shown = target && to.view ? viewComponentName(target, to.view) : to?.to;
      if (shown && p)
        properties[wire] = { anyOf: [p, ref('schemas', shown)], description: `Expanded with expand=${wire}.` };
    }
    out[names.listed] = {
      ...answered.schema,
      properties,
      description: `${pascalCase(withArticle(resource.name))} as a list or a read returns it.`,
    };
  }
  out[names.page] = pageSchema(resource, ref('schemas', names.listed), answerOf(resource, 'list', resources).example);
  return out;
};
