/**
 * Error payload presets: well-known shapes written in the template language (payload-template.ts), each with the
 * field-code names and type words its interface uses. A spec's own `payload`, `fieldCodes`, `types` and `remap`
 * win over a preset's.
 */
export interface ErrorPreset {
  readonly payload: unknown;
  readonly fieldCodes?: Readonly<Record<string, string>>;
  readonly types?: Readonly<Record<string, string>>;
  readonly remap?: Readonly<Record<string, { readonly status?: number; readonly message?: string }>>;
}

export const ERROR_PRESETS = {
  /** RealWorld (Conduit): {"errors": {"email": ["has already been taken"]}}. */
  'per-field': {
    payload: { errors: { $byField: '{message}', $other: 'body' } },
  },
  /** Stripe: {"error": {"type", "code", "message", "param"}}. */
  stripe: {
    payload: { error: { type: '{type}', code: '{code}', 'message?': '{message}', 'param?': '{param}' } },
    types: {
      '5xx': 'api_error',
      idempotency_key_in_use: 'idempotency_error',
      idempotency_key_reused: 'idempotency_error',
      '4xx': 'invalid_request_error',
    },
  },
  /** GitHub: {"message", "errors": [{"resource", "field", "code"}], "documentation_url"}. */
  github: {
    payload: {
      message: '{message}',
      'errors?': { $each: { resource: '{resource}', field: '{field}', code: '{code}' } },
      'documentation_url?': '{documentation}',
    },
    fieldCodes: { required: 'missing_field', unique: 'already_exists', '*': 'invalid' },
    remap: {
      validation_failed: { message: 'Validation Failed' },
      unknown_field: { message: 'Validation Failed' },
      read_only_field: { message: 'Validation Failed' },
      unique_violation: { status: 422, message: 'Validation Failed' },
      invalid_reference: { message: 'Validation Failed' },
      not_found: { message: 'Not Found' },
      unauthenticated: { message: 'Requires authentication' },
      invalid_credentials: { message: 'Bad credentials' },
    },
  },
} as const satisfies Record<string, ErrorPreset>;

export type ErrorPresetName = keyof typeof ERROR_PRESETS;
export const ERROR_FORMATS = [
  'problem+json',
  'custom',
  'per-field',
  'stripe',
  'github',
] as const satisfies ReadonlyArray<'problem+json' | 'custom' | ErrorPresetName>;
export type ErrorFormat = (typeof ERROR_FORMATS)[number];
