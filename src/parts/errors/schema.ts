import { Type } from '@sinclair/typebox';
import { namedRecord } from '../../spec/named-record.ts';
import { stringEnum } from '../../spec/string-enum.ts';
import { ERROR_FORMATS } from './presets.ts';

export const ErrorEntrySchema = Type.Object(
  {
    status: Type.Integer(),
    title: Type.String(),
    description: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

/** A new status, title or message for a code of the catalogue (built-in or the spec's own). */
export const ErrorRemapSchema = Type.Object(
  {
    status: Type.Optional(Type.Integer({ minimum: 400, maximum: 599 })),
    title: Type.Optional(Type.String()),
    message: Type.Optional(
      Type.String({ description: 'Replaces the detail of the error and the message of each of its failing fields.' }),
    ),
    field: Type.Optional(
      Type.String({ description: 'The field an error with no failing field is about ("{field}", "$other").' }),
    ),
    type: Type.Optional(Type.String({ description: 'The "{type}" word of this code in a non-problem payload.' })),
  },
  { additionalProperties: false },
);

/** Part 7 — errors: the payload format and the service's own catalogue. */
export const ErrorsSchema = Type.Object(
  {
    format: Type.Optional(
      stringEnum(
        ERROR_FORMATS,
        'problem+json (RFC 9457, default); a preset: per-field (RealWorld), stripe, github; or custom with `payload`.',
      ),
    ),
    typeBase: Type.Optional(
      Type.String({ description: 'URI prefix of problem types (default https://ninefold.dev/errors/).' }),
    ),
    catalogue: Type.Optional(namedRecord('^[a-z][a-z0-9_]*$', ErrorEntrySchema)),
    remap: Type.Optional(
      Type.Record(Type.String(), ErrorRemapSchema, {
        description: 'Per code: another status, title or message (unique_violation: { status: 422 }).',
      }),
    ),
    payload: Type.Optional(
      Type.Unknown({
        description:
          'Payload template: JSON in which "{code}", "{status}", "{title}", "{message}", "{detail}", "{type}", "{field}", "{param}", "{resource}", "{instance}", "{documentation}" and "{errors}" are filled; a key ending in "?" is left out when empty; {"$each": T} is one T per failing field; {"$byField": T, "$other": key} maps each failing field to its list of T.',
      }),
    ),
    fieldCodes: Type.Optional(
      Type.Record(Type.String(), Type.String(), {
        description:
          'Field codes renamed in payloads ("{code}" of a failing field): unique → already_exists; "*" for the rest.',
      }),
    ),
    fieldMessages: Type.Optional(
      Type.Record(Type.String(), Type.String(), {
        description: "Message of a failing field by its field code: required → can't be blank.",
      }),
    ),
    types: Type.Optional(
      Type.Record(Type.String(), Type.String(), {
        description: 'The "{type}" word by code or by status class (4xx, 5xx).',
      }),
    ),
    documentation: Type.Optional(
      Type.String({ description: 'The "{documentation}" URL of an error; "{code}" may appear in it.' }),
    ),
  },
  { additionalProperties: false, description: 'Part 7: errors.' },
);
