import type { Operation, ResourcePlan, ViewPlan } from '../../plan/types.ts';
import { createWireRecord } from '../endpoints/wire-names.ts';
import { wireRecordSchema } from '../endpoints/wire-openapi.ts';
import { type OpenApiObject, ref } from '../openapi-model.ts';
import { exampleComputed, exampleRecord, exampleStored } from './example.ts';
import { viewSchema } from './json-schema.ts';

/** The component name of a view: `UserProfile`. */
export const viewComponentName = (resource: ResourcePlan, view: ViewPlan | string): string =>
  `${resource.name}${typeof view === 'string' ? view : view.name}`;

/** A view's example: the record's example, projected, with its computed fields as an anonymous caller sees them. */
export const exampleView = (
  resource: ResourcePlan,
  view: ViewPlan,
  resources: ReadonlyMap<string, ResourcePlan>,
): Record<string, unknown> => {
  const record = exampleStored(resource, resources);
  const out: Record<string, unknown> = {};
  for (const name of view.fields) if (record[name] !== undefined) out[name] = record[name];
  for (const c of view.computed) out[c.name] = exampleComputed(c);
  return createWireRecord(resource)(out);
};

/**
 * An answer's schema and example with the references the resource always embeds (`embed: true`) shown as the
 * records they name: the reference's view, or the whole record (events keep the id: they carry the record stored).
 */
export const withEmbedded = (
  resource: ResourcePlan,
  schema: OpenApiObject,
  example: Record<string, unknown>,
  resources: ReadonlyMap<string, ResourcePlan>,
): { readonly schema: OpenApiObject; readonly example: Record<string, unknown> } => {
  const fields = resource.fields.filter((f) => f.ref?.embed);
  const properties = schema.properties as Record<string, OpenApiObject> | undefined;
  if (fields.length === 0 || !properties) return { schema, example };
  const shownProperties = { ...properties };
  for (const f of fields) {
    const wire = resource.wire.names.out.get(f.name)?.name ?? f.name;
    const target = resources.get(f.ref?.to ?? '');
    const p = shownProperties[wire];
    if (!target || !p) continue;
    const view = f.ref?.view ? target.views.get(f.ref.view) : undefined;
    const embedded = ref('schemas', view ? viewComponentName(target, view) : target.name);
    const nullable = Array.isArray(p.type) && p.type.includes('null');
    shownProperties[wire] = {
      ...(nullable ? { anyOf: [embedded, { type: 'null' }] } : { allOf: [embedded] }),
      readOnly: true,
      description: `The ${target.name} this names, always shown whole${view ? ` (its ${view.name} view)` : ''}; requests send its id.`,
    };
  }
  return { schema: { ...schema, properties: shownProperties }, example: embedExample(resource, example, resources) };
};

/** An answer's example with the references the resource always embeds replaced by their records' examples. */
const embedExample = (
  resource: ResourcePlan,
  example: Record<string, unknown>,
  resources: ReadonlyMap<string, ResourcePlan>,
): Record<string, unknown> => {
  const out = { ...example };
  for (const f of resource.fields) {
    const target = f.ref?.embed ? resources.get(f.ref.to) : undefined;
    const wire = resource.wire.names.out.get(f.name)?.name ?? f.name;
    if (!target || out[wire] === undefined || out[wire] === null) continue;
    const view = f.ref?.view ? target.views.get(f.ref.view) : undefined;
    out[wire] = view ? exampleView(target, view, resources) : exampleRecord(target, resources);
  }
  return out;
};

/** One component per view of the resource, with its example. */
export const viewComponents = (
  resource: ResourcePlan,
  resources: ReadonlyMap<string, ResourcePlan>,
): Record<string, OpenApiObject> =>
  Object.fromEntries(
    [...resource.views.values()].map((v) => [
      viewComponentName(resource, v),
      (() => {
        const shown = withEmbedded(
          resource,
          wireRecordSchema(resource, viewSchema(resource, v, true) as OpenApiObject),
          exampleView(resource, v, resources),
          resources,
        );
        return {
          ...shown.schema,
          ...(v.description ? {} : { description: `The ${v.name} view of ${resource.name}.` }),
          examples: [shown.example],
        };
      })(),
    ]),
  );

/** What an operation answers with, as the document shows it: the record, or the operation's view. */
export const answerOf = (
  resource: ResourcePlan,
  op: Operation,
  resources: ReadonlyMap<string, ResourcePlan>,
): { readonly schema: OpenApiObject; readonly example: Record<string, unknown> } => {
  const view = resource.views.get(resource.answerViews[op] ?? '');
  return view
    ? {
        schema: ref('schemas', viewComponentName(resource, view)),
        example: embedExample(resource, exampleView(resource, view, resources), resources),
      }
    : {
        schema: ref('schemas', resource.name),
        example: embedExample(resource, exampleRecord(resource, resources), resources),
      };
};
