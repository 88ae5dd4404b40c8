import { type Static, Type } from '@sinclair/typebox';
import { namedRecord } from '../../spec/named-record.ts';
import { FieldsSchema } from '../resources/field-schema.ts';

const StateNames = Type.Union([Type.String(), Type.Array(Type.String(), { minItems: 1 })]);

export const TransitionSchema = Type.Object(
  {
    from: StateNames,
    to: Type.String(),
    description: Type.Optional(Type.String()),
    when: Type.Optional(Type.String({ description: 'CEL guard over record, input and principal.' })),
    input: Type.Optional(FieldsSchema),
    roles: Type.Optional(Type.Array(Type.String())),
    after: Type.Optional(
      Type.String({ description: 'Fire by itself this long after entering a from-state: 24h or PT24H.' }),
    ),
    event: Type.Optional(Type.String({ description: 'Name of the event emitted (default <Resource>.<to-state>).' })),
    path: Type.Optional(Type.String({ description: 'Path segment of the transition endpoint (default the name).' })),
  },
  { additionalProperties: false },
);

export const StateSchema = Type.Object(
  {
    description: Type.Optional(Type.String()),
    final: Type.Optional(Type.Boolean()),
    editable: Type.Optional(Type.Array(Type.String(), { description: 'Fields a PATCH may change in this state.' })),
  },
  { additionalProperties: false },
);

/** Part 3 — a resource's state machine. */
export const StatesSchema = Type.Object(
  {
    field: Type.Optional(Type.String({ description: 'Name of the state field (default "status").' })),
    initial: Type.String(),
    states: Type.Optional(
      Type.Union([Type.Array(Type.String()), Type.Record(Type.String(), StateSchema)], {
        description: 'The states; default: every state named by a transition or initial.',
      }),
    ),
    final: Type.Optional(Type.Array(Type.String())),
    editable: Type.Optional(Type.Record(Type.String(), Type.Array(Type.String()))),
    transitions: namedRecord('^[a-z][A-Za-z0-9]*$', TransitionSchema),
  },
  { additionalProperties: false, description: 'Part 3: states and transitions.' },
);

export type StatesSpec = Static<typeof StatesSchema>;
export type TransitionSpec = Static<typeof TransitionSchema>;
