/**
 * The rules `ninefold diff` classes changes by, after Stripe's list of backwards-compatible changes: a client
 * written against the old spec keeps working after a safe change, and may break after a breaking one.
 * docs/versioning.md lists every rule; a test fails when the two drift apart.
 */
export const DIFF_RULES = {
  // breaking
  'resource-removed': { breaking: true, summary: 'A resource is removed.' },
  'field-removed': { breaking: true, summary: 'A field (of a record, an input or a payload) is removed.' },
  'field-renamed': { breaking: true, summary: 'A field is renamed (a rename declared by a new version).' },
  'required-field-added': { breaking: true, summary: 'A new input field is required (and has no default).' },
  'field-made-required': { breaking: true, summary: 'An input field that was optional is now required.' },
  'field-made-optional': { breaking: true, summary: 'A field answers may now leave out was always present.' },
  'field-made-nullable': { breaking: true, summary: 'A field answers show may now be null.' },
  'field-made-read-only': { breaking: true, summary: 'A field callers could write is now read-only.' },
  'field-hidden': { breaking: true, summary: 'A field answers showed is now write-only.' },
  'type-changed': { breaking: true, summary: 'A field has another type (or refers to another resource).' },
  'constraint-tightened': {
    breaking: true,
    summary:
      'An input constraint is tightened: maxLength, max, maxItems, precision or scale down; minLength, min or minItems up; a new pattern, format or unique.',
  },
  'enum-value-removed': { breaking: true, summary: 'An enum value (or a state) is removed.' },
  'default-changed': { breaking: true, summary: 'A default value changes.' },
  'field-changed': {
    breaking: true,
    summary: 'Anything else about a field changes (onDelete, view, embed, normalize, derive…).',
  },
  'operation-removed': { breaking: true, summary: 'An operation (list, get, create…) of a resource is removed.' },
  'endpoint-removed': { breaking: true, summary: 'A custom endpoint is removed.' },
  'path-changed': { breaking: true, summary: 'A path or method changes (a collection, custom endpoint or stream).' },
  'status-changed': { breaking: true, summary: 'A success status or an error code’s status changes.' },
  'list-option-removed': { breaking: true, summary: 'A list filter, sort or expand is removed.' },
  'transition-removed': { breaking: true, summary: 'A state transition is removed.' },
  'transition-changed': { breaking: true, summary: 'A transition leaves from fewer states, or goes elsewhere.' },
  'guard-changed': { breaking: true, summary: 'A transition’s guard (when) is added or changed.' },
  'event-removed': { breaking: true, summary: 'An event type (declared, automatic or a callback’s) is removed.' },
  'auth-changed': { breaking: true, summary: 'An auth scheme is removed or changed, or the required ones change.' },
  'auth-rule-changed': { breaking: true, summary: 'An access rule is changed or removed.' },
  'roles-narrowed': { breaking: true, summary: 'Fewer roles may do something, or a role is removed.' },
  'limit-lowered': { breaking: true, summary: 'A limit (rate, quota, size, page size, time-out) is lowered or added.' },
  'error-format-changed': { breaking: true, summary: 'The error format changes.' },
  'version-removed': { breaking: true, summary: 'A declared API version is removed.' },
  'version-rewritten': { breaking: true, summary: 'The changes of a version already published are edited.' },
  'versioning-changed': {
    breaking: true,
    summary: 'The versioning scheme, its parameter name or the default version changes, or a sunset moves earlier.',
  },
  'behaviour-changed': {
    breaking: true,
    summary:
      'Behaviour changes: an initial or final state, editable fields, a timer, the default sort or page size, webhook signing.',
  },
  'other-change': {
    breaking: true,
    summary: 'Any change no rule above describes (taken as breaking, to be safe).',
  },
  // safe
  'resource-added': { breaking: false, summary: 'A resource is added.' },
  'field-added': { breaking: false, summary: 'An answer field, or an optional input field, is added.' },
  'field-loosened': {
    breaking: false,
    summary:
      'A constraint is loosened (the reverse of constraint-tightened), an input becomes optional, or an answer-only constraint changes.',
  },
  'enum-value-added': { breaking: false, summary: 'An enum value (or a state) is added.' },
  'operation-added': { breaking: false, summary: 'An operation or a custom endpoint is added.' },
  'list-option-added': { breaking: false, summary: 'A list filter, sort or expand is added.' },
  'transition-added': { breaking: false, summary: 'A transition is added, or leaves from more states.' },
  'event-added': { breaking: false, summary: 'An event type is added.' },
  'auth-added': { breaking: false, summary: 'An auth scheme, a role, or a rule where there was none is added.' },
  'roles-widened': { breaking: false, summary: 'More roles may do something.' },
  'limit-raised': { breaking: false, summary: 'A limit is raised or removed.' },
  'error-added': { breaking: false, summary: 'An error code is added or no longer used.' },
  'id-changed': { breaking: false, summary: 'An id prefix changes (ids are opaque; longer ids are safe).' },
  'version-added': { breaking: false, summary: 'An API version is added, deprecated, or its sunset moved later.' },
  'docs-changed': {
    breaking: false,
    summary: 'Descriptions, titles, summaries, examples, handlers, indexes, the webhook retry schedule.',
  },
} as const satisfies Record<string, { breaking: boolean; summary: string }>;

export type DiffRule = keyof typeof DIFF_RULES;
