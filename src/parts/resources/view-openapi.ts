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

/** One component per view of the resource, with its example. */
export const viewComponents = (
  resource: ResourcePlan,
  resources: ReadonlyMap<string, ResourcePlan>,
): Record<string, OpenApiObject> =>
  Object.fromEntries(
    [...resource.views.values()].map((v) => [
      viewComponentName(resource, v),
      {
        ...wireRecordSchema(resource, viewSchema(resource, v, true) as OpenApiObject),
        ...(v.description ? {} : { description: `The ${v.name} view of ${resource.name}.` }),
        examples: [exampleView(resource, v, resources)],
      },
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
    ? { schema: ref('schemas', viewComponentName(resource, view)), example: exampleView(resource, view, resources) }
    : { schema: ref('schemas', resource.name), example: exampleRecord(resource, resources) };
};
