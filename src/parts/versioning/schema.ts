import { Type } from '@sinclair/typebox';
import { stringEnum } from '../../spec/string-enum.ts';
import { FieldSchema } from '../resources/field-schema.ts';

const Named = (description: string) => Type.Optional(Type.String({ description }));

export const ChangeSchema = Type.Object(
  {
    resource: Named('The resource the change is about (every kind but operations, events and errors).'),
    description: Type.Optional(Type.String()),
    rename: Type.Optional(Type.Object({ from: Type.String(), to: Type.String() }, { additionalProperties: false })),
    add: Named('A field that exists from this version on.'),
    remove: Named('A field that no longer exists from this version on.'),
    require: Named('A field required from this version on; an older request lacking it gets `default`.'),
    default: Type.Optional(
      Type.Unknown({
        description:
          'With remove: the value older versions are shown for the removed field. With require: the value an older request lacking the field gets.',
      }),
    ),
    retype: Type.Optional(
      Type.Object({ field: Type.String(), from: Type.Ref(FieldSchema) }, { additionalProperties: false }),
    ),
    'enum-add': Type.Optional(
      Type.Object(
        {
          field: Type.String(),
          values: Type.Array(Type.String(), { minItems: 1, description: 'Values new in this version.' }),
          fallback: Type.String({ description: 'How older versions are shown a record holding one of them.' }),
        },
        { additionalProperties: false },
      ),
    ),
    move: Type.Optional(
      Type.Object(
        {
          from: Type.String({ description: 'The top-level field of older versions.' }),
          to: Type.String({ description: 'Where it is from this version on: `object.field`.' }),
        },
        { additionalProperties: false },
      ),
    ),
    'add-operation': Named('An operation new in this version: `Customer.delete` or `POST /customers/{id}/archive`.'),
    'remove-operation': Named('An operation gone from this version on (still served to older versions).'),
    'add-transition': Named('A transition of `resource` new in this version.'),
    'remove-transition': Named('A transition of `resource` gone from this version on (older versions keep it).'),
    'add-event': Named('An event type new in this version: older webhook endpoints neither get nor subscribe to it.'),
    'remove-event': Named('An event type gone from this version on (endpoints of older versions still get it).'),
    error: Type.Optional(
      Type.Object(
        {
          code: Type.String({ description: 'The error code from this version on.' }),
          was: Type.Object(
            {
              code: Type.Optional(Type.String({ description: 'What older versions are answered instead.' })),
              status: Type.Optional(Type.Integer({ minimum: 400, maximum: 599 })),
            },
            { additionalProperties: false },
          ),
        },
        { additionalProperties: false },
      ),
    ),
    transform: Named(
      'A TypeScript or JavaScript module exporting request(body, ctx) and/or answer(body, ctx), for what no kind can say.',
    ),
    covers: Type.Optional(
      Type.Array(Type.String(), {
        description: 'With transform: the `ninefold diff` rules (of `resource`) the transform makes safe.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const VersionSchema = Type.Object(
  {
    id: Type.String(),
    description: Type.Optional(Type.String()),
    changes: Type.Optional(Type.Array(ChangeSchema)),
  },
  { additionalProperties: false },
);

/** Part 9 — versioning. */
export const VersioningSchema = Type.Object(
  {
    scheme: stringEnum(['path', 'header', 'query', 'media-type'] as const),
    name: Type.Optional(
      Type.String({ description: 'Header or query parameter name (default Api-Version / version).' }),
    ),
    default: Type.Optional(
      Type.String({ description: 'Version served when a request names none (default the newest).' }),
    ),
    versions: Type.Array(VersionSchema, { minItems: 1 }),
    deprecated: Type.Optional(
      Type.Record(
        Type.String(),
        Type.Object(
          {
            deprecation: Type.Optional(Type.String({ description: 'Date (YYYY-MM-DD) the version was deprecated.' })),
            sunset: Type.Optional(Type.String({ description: 'Date (YYYY-MM-DD) after which it stops being served.' })),
            link: Type.Optional(Type.String()),
          },
          { additionalProperties: false },
        ),
      ),
    ),
  },
  { additionalProperties: false, description: 'Part 9: versioning.' },
);
