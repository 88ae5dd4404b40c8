import { Type } from '@sinclair/typebox';

/** A string from a fixed set, emitted as a JSON Schema `enum` so a typo gets one clear error, not one per branch. */
export const stringEnum = <const T extends readonly string[]>(values: T, description?: string) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...(description ? { description } : {}) });
