import { type TSchema, Type } from '@sinclair/typebox';

/** A map whose keys must match `pattern`; other keys are refused, so a misspelt name is reported. */
export const namedRecord = <V extends TSchema>(pattern: string, value: V, description?: string) =>
  Type.Record(Type.String({ pattern }), value, {
    additionalProperties: false,
    ...(description ? { description } : {}),
  });
