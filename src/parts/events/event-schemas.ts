import type { Plan, ResourcePlan, TransitionPlan } from '../../plan/types.ts';
import { type OpenApiObject, pascalCase, ref } from '../openapi-model.ts';
import { exampleId, exampleObject, examplePatch, exampleRecord, exampleValue } from '../resources/example.ts';
import { objectSchema } from '../resources/json-schema.ts';
import { withArticle } from '../resources/naming.ts';
import { recordComponent } from '../resources/openapi.ts';

/**
 * One event type as the AsyncAPI document (a channel) and the OpenAPI `webhooks` (a POST) show it: the
 * envelope `{id, type, time, data}` as a schema component, with an example. Shared by both emitters.
 */
export interface EventDoc {
  readonly type: string;
  /** A key safe in a JSON pointer and a component name: the type, other characters replaced by `_`. */
  readonly key: string;
  /** The type's words run together, unique among the events: Order.paid → OrderPaid (for operation ids). */
  readonly words: string;
  /** Component name of the envelope schema: OrderPaidEvent. */
  readonly schemaName: string;
  readonly summary: string;
  readonly description?: string;
  readonly schema: OpenApiObject;
  readonly example: Record<string, unknown>;
  /** Resources whose record schemas (`#/components/schemas/<Resource>`) the envelope refers to. */
  readonly resources: readonly ResourcePlan[];
}

/** What one source (a resource change, a transition, a declaration) puts in an event's `data`. */
interface Shape {
  readonly summary: string;
  readonly description?: string;
  readonly data: OpenApiObject;
  readonly example: unknown;
  readonly resource?: ResourcePlan;
}

const EXAMPLE_ACTOR = 'user_123';
const actor = (timed: boolean): OpenApiObject => ({
  type: 'string',
  description: `The caller's subject ('' when anonymous)${timed ? '; `system` for a timed transition' : ''}.`,
});

const dataObject = (properties: Record<string, OpenApiObject>): OpenApiObject => ({
  type: 'object',
  required: Object.keys(properties),
  properties,
  additionalProperties: false,
});

/**
 * The changes that can happen to a resource's records: through its endpoints, or through the record doors of
 * custom handlers (which can make any change). An event no change can cause is not documented.
 */
const possibleChanges = (plan: Plan, resource: ResourcePlan): Set<string> => {
  const ops = resource.operations;
  const any = plan.custom.length > 0;
  return new Set([
    ...(any || ops.has('create') ? ['created'] : []),
    ...(any || ops.has('update') || ops.has('replace') ? ['updated'] : []),
    ...(any || ops.has('delete') ? ['deleted'] : []),
  ]);
};

const changeShapes = (plan: Plan, resource: ResourcePlan): Array<[string, Shape]> => {
  const { name } = resource;
  const record = ref('schemas', eventRecordName(resource));
  const example = exampleRecord(resource, plan.resourcesByName);
  const fieldNames = resource.fields.map((f) => f.name);
  const changed: OpenApiObject = {
    type: 'array',
    items: fieldNames.length ? { type: 'string', enum: fieldNames } : { type: 'string' },
    description: 'The fields the update changed.',
  };
  const changedExample = Object.keys(examplePatch(resource, plan.resourcesByName));
  const possible = possibleChanges(plan, resource);
  const shapes: Array<[string, Shape]> = [
    [
      `${name}.created`,
      {
        summary: `${name} created.`,
        data: dataObject({ record, actor: actor(false) }),
        example: { record: example, actor: EXAMPLE_ACTOR },
        resource,
      },
    ],
    [
      `${name}.updated`,
      {
        summary: `${name} changed.`,
        data: dataObject({ record, changed, actor: actor(false) }),
        example: { record: example, changed: changedExample, actor: EXAMPLE_ACTOR },
        resource,
      },
    ],
    [
      `${name}.deleted`,
      {
        summary: `${name} deleted.`,
        description: '`record` is the record as it was before the delete.',
        data: dataObject({ record, actor: actor(false) }),
        example: { record: example, actor: EXAMPLE_ACTOR },
        resource,
      },
    ],
  ];
  return shapes.filter(([type]) => possible.has(type.slice(name.length + 1)));
};

const distinct = <T>(values: readonly T[]): T[] => {
  const seen = new Map(values.map((v) => [JSON.stringify(v), v]));
  return [...seen.values()];
};

/** The transitions of one resource that emit one event (several may share it, as cancel and expire do). */
const transitionShape = (plan: Plan, resource: ResourcePlan, transitions: readonly TransitionPlan[]): Shape => {
  const machine = resource.states;
  const record = ref('schemas', eventRecordName(resource));
  // A timed transition runs with an empty input, so its input fields cannot be required.
  const inputs = distinct(
    transitions.map((t) => {
      const { required, ...schema } = objectSchema(t.input ?? {}, 'input', true);
      return t.after || !required ? schema : { ...schema, required };
    }),
  );
  const input = inputs.length === 1 ? inputs[0] : { anyOf: inputs };
  const first = transitions[0] as TransitionPlan;
  const states = distinct(transitions.map((t) => t.to));
  return {
    summary: `${resource.name} moved to ${states.join(' or ')}.`,
    description: `Emitted by the transition${transitions.length > 1 ? 's' : ''} ${transitions.map((t) => `\`${t.name}\``).join(', ')}.`,
    data: dataObject({
      record,
      transition: { type: 'string', enum: transitions.map((t) => t.name), description: 'The transition taken.' },
      from: { type: 'string', enum: distinct(transitions.flatMap((t) => t.from)), description: 'The state before.' },
      to: { type: 'string', enum: states, description: 'The state after.' },
      input: { ...input, description: 'The transition input as sent.' },
      actor: actor(transitions.some((t) => t.after)),
    }),
    example: {
      record: {
        ...exampleRecord(resource, plan.resourcesByName),
        ...(machine ? { [resource.wire.names.out.get(machine.field)?.name ?? machine.field]: first.to } : {}),
      },
      transition: first.name,
      from: first.from[0],
      to: first.to,
      input: first.after ? {} : exampleObject(first.input ?? {}, 'input', plan.resourcesByName),
      actor: first.after ? 'system' : EXAMPLE_ACTOR,
    },
    resource,
  };
};

/** Every source of each event type: resource changes and transitions (where events.auto covers), declarations. */
const shapesByType = (plan: Plan): Map<string, Shape[]> => {
  const shapes = new Map<string, Shape[]>();
  const add = (type: string, shape: Shape) => shapes.set(type, [...(shapes.get(type) ?? []), shape]);
  for (const resource of plan.resources) {
    if (!plan.events.autoResources.has(resource.name)) continue;
    for (const [type, shape] of changeShapes(plan, resource)) add(type, shape);
    const byEvent = new Map<string, TransitionPlan[]>();
    for (const t of resource.states?.transitions ?? []) byEvent.set(t.event, [...(byEvent.get(t.event) ?? []), t]);
    for (const [type, transitions] of byEvent) add(type, transitionShape(plan, resource, transitions));
  }
  for (const [type, e] of plan.events.declared)
    add(type, {
      summary: e.description ?? `The ${type} event.`,
      ...(e.description ? {} : { description: 'Declared by the service; its handlers emit it.' }),
      data: objectSchema(e.payload, 'output', true),
      example: exampleObject(e.payload, 'output', plan.resourcesByName),
    });
  return shapes;
};

const unique = (base: string, taken: Set<string>): string => {
  let name = base;
  for (let i = 2; taken.has(name); i++) name = `${base}${i}`;
  taken.add(name);
  return name;
};

const EVENT_ID: OpenApiObject = {
  type: 'string',
  pattern: '^evt_[0-9A-HJKMNP-TV-Z]{26}$',
  description: 'The event id: every delivery of the event carries it, so a receiver drops ids it has seen.',
};

/**
 * The events of a plan, in the order of `knownEventNames`. `taken` holds the schema component names already in
 * use (the records'), so that an event's never replaces one.
 */
export const eventDocs = (plan: Plan, taken: ReadonlySet<string> = new Set()): EventDoc[] => {
  const shapes = shapesByType(plan);
  const keys = new Set<string>();
  const names = new Set(taken);
  const words = new Set<string>();
  for (const resource of plan.resources) names.add(eventRecordName(resource));
  return plan.events.types.flatMap((type) => {
    const sources = shapes.get(type) ?? [];
    if (!sources.length) return [];
    const word = unique(
      type
        .split(/[^A-Za-z0-9]+/)
        .filter(Boolean)
        .map(pascalCase)
        .join('') || 'Event',
      words,
    );
    const data = sources.length > 1 ? { anyOf: sources.map((s) => s.data) } : (sources[0]?.data ?? {});
    const summary = sources.map((s) => s.summary).join(' Or: ');
    const description = sources
      .map((s) => s.description ?? '')
      .filter(Boolean)
      .join(' ');
    return {
      type,
      key: unique(type.replace(/[^\w.-]/g, '_'), keys),
      words: word,
      schemaName: unique(`${word}Event`, names),
      summary,
      ...(description ? { description } : {}),
      schema: {
        type: 'object',
        description: `${summary}${description ? ` ${description}` : ''}`,
        required: ['id', 'type', 'time', 'data'],
        properties: {
          id: EVENT_ID,
          type: { type: 'string', const: type },
          time: { type: 'string', format: 'date-time', description: 'When the change was made.' },
          data,
        },
        additionalProperties: false,
      },
      example: {
        id: exampleId({ idPrefix: 'evt' }),
        type,
        time: exampleValue({ type: 'datetime' }, 'time', 'output'),
        data: sources[0]?.example ?? {},
      },
      resources: [...new Set(sources.flatMap((s) => (s.resource ? [s.resource] : [])))],
    };
  });
};

/** The component name of a record as events carry it: OrderEventRecord. */
export const eventRecordName = (resource: ResourcePlan): string => `${resource.name}EventRecord`;

/** Drops `readOnly` and `writeOnly`: they say who writes a field in a request, and an event is sent as one. */
const withoutAccessModes = (schema: unknown): unknown => {
  if (Array.isArray(schema)) return schema.map(withoutAccessModes);
  if (!schema || typeof schema !== 'object') return schema;
  return Object.fromEntries(
    Object.entries(schema)
      .filter(([k]) => k !== 'readOnly' && k !== 'writeOnly')
      .map(([k, v]) => [k, k === 'examples' || k === 'enum' || k === 'default' ? v : withoutAccessModes(v)]),
  );
};

/**
 * A record as an event carries it: the record schema without `readOnly` (a webhook delivery is a request, where a
 * validating receiver would refuse read-only fields), and fields some roles may not see are not required (they
 * are left out for a receiver whose owner may not read them).
 */
export const eventRecordComponent = (
  resource: ResourcePlan,
  resources: ReadonlyMap<string, ResourcePlan>,
): OpenApiObject => {
  const schema = withoutAccessModes(recordComponent(resource, resources)) as OpenApiObject;
  const restricted = new Set(
    resource.fields
      .filter((f) => f.spec.readableBy?.length)
      .map((f) => resource.wire.names.out.get(f.name)?.name ?? f.name),
  );
  return {
    ...schema,
    description: `${pascalCase(withArticle(resource.name))} as events carry it: the record after the change (before a delete).`,
    required: (schema.required as string[]).filter((n) => !restricted.has(n)),
  };
};
