import { type Static, Type } from '@sinclair/typebox';
import { namedRecord } from '../../spec/named-record.ts';
import { stringEnum } from '../../spec/string-enum.ts';

export const COMPUTED_TYPES = ['boolean', 'integer'] as const;

/** A read-only field computed per caller from other resources, never stored. */
export const ComputedSchema = Type.Object(
  {
    type: stringEnum(COMPUTED_TYPES),
    cel: Type.String({
      description:
        'exists(Resource, x, <condition>) (boolean) or count(Resource, x, <condition>) (integer); the condition is ' +
        'a conjunction (&&) of comparisons between x.<field> and record.<field>, caller (the principal subject) or ' +
        'a constant. Compiled to a SQL subquery of the record read.',
    }),
    description: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

export const ComputedFieldsSchema = namedRecord('^[A-Za-z_][A-Za-z0-9_]*$', ComputedSchema);

/** A named projection of a resource: some of its fields, plus computed fields of its own. */
export const ViewSchema = Type.Object(
  {
    description: Type.Optional(Type.String()),
    fields: Type.Array(Type.String(), {
      minItems: 1,
      description: 'Fields shown, in order: declared, system (id, createdAt, updatedAt) or computed fields.',
    }),
    computed: Type.Optional(ComputedFieldsSchema),
  },
  { additionalProperties: false },
);

export const ViewsSchema = namedRecord('^[A-Z][A-Za-z0-9]*$', ViewSchema);

export type ComputedSpec = Static<typeof ComputedSchema>;
export type ViewSpec = Static<typeof ViewSchema>;
