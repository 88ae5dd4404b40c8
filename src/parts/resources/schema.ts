import { type Static, Type } from '@sinclair/typebox';
import { namedRecord } from '../../spec/named-record.ts';
import { stringEnum } from '../../spec/string-enum.ts';
import { StatesSchema } from '../states/schema.ts';
import { FieldsSchema } from './field-schema.ts';
import { ComputedFieldsSchema, ViewsSchema } from './view-schema.ts';

export const ID_STYLES = ['ulid', 'integer', 'uuidv7'] as const;
export type IdStyle = (typeof ID_STYLES)[number];

export const IndexSchema = Type.Object(
  {
    fields: Type.Array(Type.String(), { minItems: 1 }),
    unique: Type.Optional(Type.Boolean()),
    name: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

export const ResourceSchema = Type.Object(
  {
    description: Type.Optional(Type.String()),
    plural: Type.Optional(
      Type.String({ description: 'Plural used for the collection path (default: English plural).' }),
    ),
    idPrefix: Type.Optional(
      Type.String({ pattern: '^[a-z][a-z0-9]{0,11}$', description: 'Ids look like <prefix>_<ulid>.' }),
    ),
    object: Type.Optional(
      Type.String({
        pattern: '^[a-z][a-z0-9_.]*$',
        description: 'A constant, read-only `object` member in every answer of this resource (customer).',
      }),
    ),
    fields: FieldsSchema,
    indexes: Type.Optional(Type.Array(IndexSchema)),
    states: Type.Optional(StatesSchema),
    id: Type.Optional(
      stringEnum(ID_STYLES, 'Id style: ulid (default, <prefix>_<ULID>), integer (1, 2, 3 per resource), uuidv7.'),
    ),
    unique: Type.Optional(
      Type.Array(Type.Array(Type.String(), { minItems: 1 }), {
        description: 'Compound unique keys, e.g. [[owner, name]]: no two records share all these values.',
      }),
    ),
    computed: Type.Optional(ComputedFieldsSchema),
    views: Type.Optional(ViewsSchema),
  },
  { additionalProperties: false },
);

/** Part 2 — resources and their fields. Names are PascalCase. */
export const ResourcesSchema = namedRecord(
  '^[A-Z][A-Za-z0-9]*$',
  ResourceSchema,
  'Part 2: resources, their fields, types, formats and required flags.',
);

export type ResourceSpec = Static<typeof ResourceSchema>;
