import type { BuiltInErrorCode } from './catalogue.ts';
import type { FieldErrorCode } from './field-codes.ts';

export interface FieldError {
  /** JSON Pointer as a URI fragment: #/lines/0/qty */
  readonly pointer: string;
  /** One of FIELD_ERROR_CODES (field-codes.ts), each listed in docs/errors.md. */
  readonly code: FieldErrorCode;
  readonly message: string;
}

/**
 * The one error the runtime throws on purpose. Its code is a catalogue code (built-in or the spec's own);
 * only `detail`, `errors` and `extensions` travel to the client, never a message of a library.
 */
export class ApiError extends Error {
  constructor(
    readonly code: BuiltInErrorCode | (string & {}),
    readonly detail?: string,
    readonly errors?: readonly FieldError[],
    readonly extensions?: Readonly<Record<string, unknown>>,
    readonly headers?: Readonly<Record<string, string | string[]>>,
    /** Another status than the catalogue's: an older API version's (versioning `error` changes). */
    readonly status?: number,
  ) {
    super(detail ?? code);
    this.name = 'ApiError';
  }
}
