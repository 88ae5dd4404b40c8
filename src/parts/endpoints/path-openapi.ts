import type { BoundPath, Plan, ResourcePlan } from '../../plan/types.ts';
import type { OpenApiObject } from '../openapi-model.ts';
import { exampleId, exampleValue } from '../resources/example.ts';
import { fieldSchema } from '../resources/json-schema.ts';

/** One path value: what it names, and its schema. */
interface KeyPart {
  readonly label: string;
  readonly schema: OpenApiObject;
}

/** An id parameter's schema: no `pattern`, so that a mock or a client that makes up ids is not refused here. */
const idParameterSchema = (resource: ResourcePlan): OpenApiObject =>
  resource.idStyle === 'integer'
    ? { type: 'integer', minimum: 1, examples: [exampleId(resource)] }
    : { type: 'string', ...(resource.idStyle === 'uuidv7' ? { format: 'uuid' } : {}), examples: [exampleId(resource)] };

/** The values that name one record of `resource` in a path, in order: its id, or its key (a ref key: its target's). */
const keyParts = (plan: Plan, resource: ResourcePlan, fields = resource.key, seen = new Set<string>()): KeyPart[] => {
  if (fields.length === 0 || seen.has(resource.name))
    return [{ label: `${resource.name}'s id`, schema: idParameterSchema(resource) }];
  return fields.flatMap((name): KeyPart[] => {
    const field = resource.fieldsByName.get(name);
    const target = plan.resourcesByName.get(field?.ref?.to ?? '');
    if (target)
      return keyParts(plan, target, target.key, new Set([...seen, resource.name])).map((p) => ({
        ...p,
        label: `${p.label} (the ${resource.name}'s ${name})`,
      }));
    const { nullable: _, ...spec } = field?.spec ?? { type: 'string' as const };
    return [
      {
        label: `${resource.name}'s ${name}`,
        schema: {
          ...fieldSchema(spec, 'output'),
          examples: [exampleValue(spec, name, 'output', plan.resourcesByName)],
        },
      },
    ];
  });
};

/**
 * The path parameters of one route, from what they bind: each parent's key (or id), then the record's. A parameter
 * of a parent or record named by id keeps the description it always had.
 */
export const routeParameters = (
  plan: Plan,
  resource: ResourcePlan,
  route: Pick<BoundPath, 'binding'>,
): OpenApiObject[] => {
  const out: OpenApiObject[] = [];
  for (const group of route.binding.parents) {
    const target = plan.resourcesByName.get(resource.fieldsByName.get(group.field)?.ref?.to ?? '');
    const parts = target ? keyParts(plan, target) : [];
    for (const [i, name] of group.params.entries()) {
      const part = parts[i];
      const byId = target?.key.length === 0;
      out.push({
        name,
        in: 'path',
        required: true,
        description: byId
          ? `The id of the ${target?.name ?? group.field} this collection belongs to.`
          : `The ${part?.label ?? name} this path belongs to.`,
        schema: part?.schema ?? { type: 'string' },
      });
    }
  }
  const fields = resource.key.filter((k) => !route.binding.parents.some((g) => g.field === k));
  const parts = keyParts(plan, resource, fields);
  for (const [i, name] of route.binding.item.entries()) {
    const part = parts[i];
    out.push({
      name,
      in: 'path',
      required: true,
      description:
        resource.key.length === 0
          ? `The ${resource.name}'s id; an id this resource could not have issued is 404.`
          : `The ${part?.label ?? name}; one no ${resource.name} has is 404.`,
      schema: part?.schema ?? { type: 'string' },
    });
  }
  return out;
};
