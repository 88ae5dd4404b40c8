import { Type } from '@sinclair/typebox';
import { namedRecord } from '../../spec/named-record.ts';
import { stringEnum } from '../../spec/string-enum.ts';

export const ErrorEntrySchema = Type.Object(
  {
    status: Type.Integer(),
    title: Type.String(),
    description: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

/** Part 7 — errors: the payload format and the service's own catalogue. */
export const ErrorsSchema = Type.Object(
  {
    format: Type.Optional(stringEnum(['problem+json', 'custom'] as const)),
    typeBase: Type.Optional(
      Type.String({ description: 'URI prefix of problem types (default https://ninefold.dev/errors/).' }),
    ),
    catalogue: Type.Optional(namedRecord('^[a-z][a-z0-9_]*$', ErrorEntrySchema)),
    payload: Type.Optional(
      Type.Unknown({
        description:
          'Custom payload template (format: custom): JSON in which "{code}", "{title}", "{detail}", "{status}" and "{errors}" are replaced.',
      }),
    ),
  },
  { additionalProperties: false, description: 'Part 7: errors.' },
);
