import type { Reporter } from './reporter.ts';
import type { ServiceSpec } from './schema.ts';

/**
 * What a part's check sees. `spec` is typed as the language says, but a check must not trust it:
 * checks run even when the shape is wrong, so that every problem is reported in one run.
 */
export interface CheckContext {
  readonly spec: ServiceSpec;
  readonly report: Reporter['report'];
}

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Entries of a map that may be malformed; values that are not objects are skipped. */
export const recordEntries = <T>(value: Record<string, T> | undefined | unknown): Array<[string, T]> =>
  isRecord(value) ? (Object.entries(value).filter(([, v]) => isRecord(v)) as Array<[string, T]>) : [];

export const stringList = (value: unknown): string[] =>
  typeof value === 'string'
    ? [value]
    : Array.isArray(value)
      ? value.filter((v): v is string => typeof v === 'string')
      : [];
