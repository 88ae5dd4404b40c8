import { type Static, Type } from '@sinclair/typebox';
import { namedRecord } from '../../spec/named-record.ts';
import { stringEnum } from '../../spec/string-enum.ts';

export const FIELD_TYPES = [
  'string',
  'integer',
  'number',
  'decimal',
  'boolean',
  'date',
  'datetime',
  'enum',
  'object',
  'array',
  'ref',
  'json',
] as const;
export const STRING_FORMATS = ['email', 'uri', 'uuid', 'hostname', 'ipv4', 'ipv6', 'pattern'] as const;
export const ON_DELETE = ['restrict', 'cascade', 'setNull'] as const;
/**
 * Normalisers: `trim`, `lower`, `upper` and `collapseSpaces` rewrite a string (or each string item of an array)
 * before validation; `dedupe` and `sort` rewrite an array after its items are validated.
 */
export const NORMALIZE_OPS = ['trim', 'lower', 'upper', 'collapseSpaces', 'dedupe', 'sort'] as const;
export const ON_CHANGE = ['rederive', 'keep'] as const;

/** A value the service computes from another field of the record and stores: `{ slug: title }`. */
export const DeriveSchema = Type.Object(
  {
    slug: Type.String({ description: 'The string field whose slug this field holds ("How to X" → how-to-x).' }),
    onChange: Type.Optional(
      stringEnum(ON_CHANGE, 'When the source changes: derive the value again (default) or keep the first one.'),
    ),
  },
  { additionalProperties: false },
);

const _literals = <T extends readonly string[]>(values: T) => stringEnum(values);

/** One field of a resource, an object or an input payload. Type/constraint combinations are checked semantically. */
export const FieldSchema = Type.Recursive(
  (Self) =>
    Type.Object(
      {
        type: stringEnum(FIELD_TYPES),
        description: Type.Optional(Type.String()),
        format: Type.Optional(stringEnum(STRING_FORMATS)),
        pattern: Type.Optional(
          Type.String({ description: 'ECMAScript regular expression the whole value must match.' }),
        ),
        required: Type.Optional(Type.Boolean()),
        nullable: Type.Optional(Type.Boolean()),
        default: Type.Optional(Type.Unknown()),
        readOnly: Type.Optional(Type.Boolean({ description: 'Set by the service, refused on write.' })),
        writeOnly: Type.Optional(Type.Boolean({ description: 'Accepted on write, never returned.' })),
        unique: Type.Optional(Type.Boolean()),
        min: Type.Optional(Type.Number()),
        max: Type.Optional(Type.Number()),
        minLength: Type.Optional(Type.Integer({ minimum: 0 })),
        maxLength: Type.Optional(Type.Integer({ minimum: 0 })),
        minItems: Type.Optional(Type.Integer({ minimum: 0 })),
        maxItems: Type.Optional(Type.Integer({ minimum: 0 })),
        uniqueItems: Type.Optional(Type.Boolean()),
        values: Type.Optional(Type.Array(Type.String(), { description: 'Allowed values of an enum.' })),
        precision: Type.Optional(Type.Integer({ minimum: 1, maximum: 38, description: 'Decimal: total digits.' })),
        scale: Type.Optional(
          Type.Integer({ minimum: 0, maximum: 18, description: 'Decimal: digits after the point.' }),
        ),
        items: Type.Optional(Self),
        fields: Type.Optional(namedRecord('^[A-Za-z_][A-Za-z0-9_]*$', Self)),
        to: Type.Optional(Type.String({ description: 'Ref: the resource referred to.' })),
        onDelete: Type.Optional(stringEnum(ON_DELETE)),
        view: Type.Optional(
          Type.String({ description: 'Ref: the view of the referred resource an expanded reference is shown as.' }),
        ),
        embed: Type.Optional(
          Type.Boolean({
            description:
              'Ref: always shown as the record it names (as its view), in every answer, not only with expand.',
          }),
        ),
        readableBy: Type.Optional(Type.Array(Type.String(), { description: 'Roles that may see this field.' })),
        writableBy: Type.Optional(
          Type.Array(Type.String(), {
            description: 'Roles that may set this field; anyone else who sends it gets 422 read_only_field.',
          }),
        ),
        example: Type.Optional(Type.Unknown()),
        sequence: Type.Optional(
          Type.String({
            description:
              'Integer: numbered 1, 2, 3… per value of this ref field (per parent), assigned at create, read-only.',
          }),
        ),
        normalize: Type.Optional(
          Type.Array(stringEnum(NORMALIZE_OPS), {
            description:
              'Rewrites every value that enters the field (bodies, filters) before it is stored or compared.',
          }),
        ),
        derive: Type.Optional(DeriveSchema),
      },
      { additionalProperties: false },
    ),
  { $id: 'Field' },
);

export type FieldSpec = Static<typeof FieldSchema>;
export type FieldType = (typeof FIELD_TYPES)[number];
export type NormalizeOp = (typeof NORMALIZE_OPS)[number];

/** A map of field name to field, as used by resources, inputs and payloads. */
export const FieldsSchema = namedRecord('^[A-Za-z_][A-Za-z0-9_]*$', Type.Ref(FieldSchema));
