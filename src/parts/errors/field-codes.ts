/**
 * The codes of `errors[]` entries: what is wrong with one field of a request. docs/errors.md lists them, and a test
 * fails when the list and this table differ.
 */
export const FIELD_ERROR_CODES = {
  required: 'a required field is missing',
  invalid_type: 'the value has the wrong JSON type',
  invalid_enum: 'the value is not one of the allowed values',
  invalid_format: 'a string does not match its format or pattern',
  out_of_range: 'a number is below its minimum or above its maximum',
  invalid_length: 'a string is shorter or longer than allowed',
  invalid_count: 'an array has fewer or more items than allowed',
  duplicate_items: 'an array that must hold distinct items repeats one',
  invalid: 'the value breaks another constraint of its field',
  unknown_field: 'the body has a field the resource does not declare',
  read_only: 'the body writes a field the service sets, or one this caller may not write',
  read_only_field: 'the body names the owner field, which the service takes from the caller',
  use_transition_endpoint: 'an update sets the state field, which changes only through transitions',
  field_locked_in_state: 'an update changes a field the record’s state locks',
  conflicts_with_path: 'a body field contradicts the same value in the path',
  invalid_reference: 'a reference names a record that does not exist',
  unique: 'the value is already taken by another record',
  forbidden_target: 'a webhook or callback URL points where the service does not send (a private address)',
} as const satisfies Record<string, string>;

export type FieldErrorCode = keyof typeof FIELD_ERROR_CODES;
