import type { DerivePlan, FieldPlan, IdStyle, ResourcePlan } from '../../plan/types.ts';
import type { ServiceSpec } from '../../spec/schema.ts';
import { planResourceEndpoints } from '../endpoints/plan.ts';
import { planStateMachine } from '../states/plan.ts';
import { planComputedAndViews } from './computed-plan.ts';
import type { FieldSpec } from './field-schema.ts';
import { snakeCase } from './naming.ts';
import type { ResourceSpec } from './schema.ts';

/** How a field's `derive` is served; `onChange` defaults to rederive. */
const derivePlan = (spec: FieldSpec): DerivePlan | undefined =>
  spec.derive
    ? {
        kind: 'slug',
        from: spec.derive.slug,
        onChange: spec.derive.onChange ?? 'rederive',
        ...(spec.maxLength !== undefined ? { maxLength: spec.maxLength } : {}),
      }
    : undefined;

export const planField = (name: string, declared: FieldSpec, isState = false, targetIdStyle?: IdStyle): FieldPlan => {
  const derive = derivePlan(declared);
  // A derived field is read-only wherever its spec is read (validators, documents): the service sets it.
  const spec = derive ? { ...declared, readOnly: true } : declared;
  return {
    name,
    type: spec.type,
    spec,
    required: spec.required === true,
    nullable: spec.nullable === true,
    readOnly: spec.readOnly === true || isState || spec.sequence !== undefined,
    writeOnly: spec.writeOnly === true,
    unique: spec.unique === true,
    column: snakeCase(name),
    hasDefault: spec.default !== undefined,
    ...(spec.default !== undefined ? { default: spec.default } : {}),
    ...(spec.type === 'ref' && spec.to
      ? {
          ref: {
            to: spec.to,
            onDelete: spec.onDelete ?? 'restrict',
            ...(spec.view ? { view: spec.view } : {}),
            ...(spec.embed ? { embed: true } : {}),
            ...(targetIdStyle && targetIdStyle !== 'ulid' ? { idStyle: targetIdStyle } : {}),
          },
        }
      : {}),
    ...(spec.sequence !== undefined ? { sequence: spec.sequence } : {}),
    ...(isState ? { isState: true } : {}),
    ...(spec.normalize?.length ? { normalize: spec.normalize } : {}),
    ...(derive ? { derive } : {}),
  };
};

export const planResource = (
  spec: ServiceSpec,
  name: string,
  resource: ResourceSpec,
  maxPageSize: number,
): ResourcePlan => {
  const states = resource.states ? planStateMachine(name, resource.states) : undefined;
  const fields: FieldPlan[] = Object.entries(resource.fields ?? {}).map(([fieldName, field]) =>
    planField(fieldName, field, false, field.to ? spec.resources?.[field.to]?.id : undefined),
  );
  if (states && !fields.some((f) => f.name === states.field)) {
    fields.push(
      planField(
        states.field,
        { type: 'enum', values: states.states.map((s) => s.name), required: true, default: states.initial },
        true,
      ),
    );
  } else if (states) {
    const index = fields.findIndex((f) => f.name === states.field);
    const existing = fields[index];
    if (existing) fields[index] = { ...existing, readOnly: true, isState: true };
  }
  const fieldsByName = new Map(fields.map((f) => [f.name, f]));
  const endpoints = planResourceEndpoints(spec, name, resource, fieldsByName, states, maxPageSize);
  const { computed, views, answerViews } = planComputedAndViews(spec, name, resource);
  return {
    name,
    ...(resource.description ? { description: resource.description } : {}),
    ...endpoints,
    table: snakeCase(name),
    ...(resource.idPrefix ? { idPrefix: resource.idPrefix } : {}),
    ...(resource.object ? { object: resource.object } : {}),
    idStyle: resource.id ?? 'ulid',
    fields,
    fieldsByName,
    ...(states ? { states } : {}),
    indexes: [
      ...(resource.indexes ?? []).map((i) => ({
        fields: i.fields,
        unique: i.unique === true,
        ...(i.name ? { name: i.name } : {}),
      })),
      ...(resource.unique ?? []).map((fields) => ({ fields, unique: true })),
    ],
    computed,
    views,
    answerViews,
  };
};
