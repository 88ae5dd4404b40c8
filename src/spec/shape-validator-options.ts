/**
 * How the spec language's validator is compiled (scripts/gen-schema.ts writes it to schema/ninefold-validate.mjs):
 * every error at once, each with the schema it broke (the diagnostics read it to suggest the keys allowed).
 */
export const SHAPE_VALIDATOR_OPTIONS = {
  allErrors: true,
  verbose: true,
  strict: false,
  allowUnionTypes: true,
} as const;
