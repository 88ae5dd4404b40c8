import { Type } from '@sinclair/typebox';
import { stringEnum } from '../../spec/string-enum.ts';
import { FieldSchema } from '../resources/field-schema.ts';

export const ChangeSchema = Type.Object(
  {
    resource: Type.String(),
    description: Type.Optional(Type.String()),
    rename: Type.Optional(Type.Object({ from: Type.String(), to: Type.String() }, { additionalProperties: false })),
    add: Type.Optional(Type.String({ description: 'A field that exists from this version on.' })),
    remove: Type.Optional(Type.String({ description: 'A field that no longer exists from this version on.' })),
    default: Type.Optional(
      Type.Unknown({ description: 'With remove: the value older versions are shown for the removed field.' }),
    ),
    retype: Type.Optional(
      Type.Object({ field: Type.String(), from: Type.Ref(FieldSchema) }, { additionalProperties: false }),
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
