/**
 * Every diagnostic `ninefold check` can report, in one typed table. `docs/diagnostics.md` lists each code;
 * a test fails when the two drift apart.
 */
export const DIAGNOSTIC_CODES = {
  // loading
  'file-not-found': { severity: 'error', part: 'loading', summary: 'The spec file does not exist or cannot be read.' },
  'spec-too-large': { severity: 'error', part: 'loading', summary: 'The spec file is larger than 1 MiB.' },
  'unsupported-file-type': {
    severity: 'error',
    part: 'loading',
    summary: 'The file is not .yaml, .yml, .json, .ts, .mts, .js or .mjs.',
  },
  'yaml-syntax': { severity: 'error', part: 'loading', summary: 'The file is not well-formed YAML or JSON.' },
  'yaml-alias-bomb': {
    severity: 'error',
    part: 'loading',
    summary: 'The YAML expands too many aliases (a resource-exhaustion attack).',
  },
  'duplicate-key': { severity: 'error', part: 'loading', summary: 'A mapping has the same key twice.' },
  'module-load-failed': {
    severity: 'error',
    part: 'loading',
    summary: 'A TypeScript/JavaScript spec module failed to load or exports no spec.',
  },
  // shape (the JSON Schema of the language)
  'unknown-property': {
    severity: 'error',
    part: 'shape',
    summary: 'A property the spec language does not have (often a typo).',
  },
  'missing-property': { severity: 'error', part: 'shape', summary: 'A required property is missing.' },
  'invalid-value': {
    severity: 'error',
    part: 'shape',
    summary: 'A value has the wrong type or is not one of the allowed values.',
  },
  'invalid-name': { severity: 'error', part: 'shape', summary: 'A name does not follow the naming rule of its kind.' },
  // purpose
  'missing-service-name': {
    severity: 'warning',
    part: 'purpose',
    summary: 'Resources are declared but the service has no name.',
  },
  // resources
  'unknown-resource': {
    severity: 'error',
    part: 'resources',
    summary: 'A reference names a resource that is not declared.',
  },
  'duplicate-name': {
    severity: 'error',
    part: 'resources',
    summary: 'Two things that must have distinct names share one.',
  },
  'reserved-field-name': {
    severity: 'error',
    part: 'resources',
    summary: 'A field uses a name the engine owns (id, createdAt, updatedAt…) or a prototype key.',
  },
  'unknown-field': {
    severity: 'error',
    part: 'resources',
    summary: 'A field name that the resource does not declare.',
  },
  'format-type-mismatch': {
    severity: 'error',
    part: 'resources',
    summary: 'A format or pattern on a field that is not a string.',
  },
  'constraint-type-mismatch': {
    severity: 'error',
    part: 'resources',
    summary: 'A constraint that does not apply to the field type (minLength on an integer…).',
  },
  'missing-type-detail': {
    severity: 'error',
    part: 'resources',
    summary: 'An enum without values, a ref without `to`, an array without items, a pattern format without a pattern.',
  },
  'invalid-range': { severity: 'error', part: 'resources', summary: 'A minimum above its maximum.' },
  'invalid-pattern': {
    severity: 'error',
    part: 'resources',
    summary: 'A pattern that is not a valid regular expression.',
  },
  'invalid-default': { severity: 'error', part: 'resources', summary: 'A default that fails its own field.' },
  'nested-field-flag': {
    severity: 'error',
    part: 'resources',
    summary: '`unique`, `default` or `onDelete` on a field inside an object or array field, where none is applied.',
  },
  'conflicting-flags': {
    severity: 'error',
    part: 'resources',
    summary: 'Flags that cannot hold together (readOnly and writeOnly, required and readOnly without default…).',
  },
  'invalid-derive': {
    severity: 'error',
    part: 'resources',
    summary:
      'A derived field that cannot be derived: not a string, from a field that is not a string, or with a default.',
  },
  'derived-not-unique': {
    severity: 'warning',
    part: 'resources',
    summary: 'A derived slug without `unique: true`: two records may get the same one, with no suffix.',
  },
  'invalid-normalize': {
    severity: 'error',
    part: 'resources',
    summary: 'A normaliser that does not apply to the field type (sort on a string, lower on an integer).',
  },
  'unknown-computed-name': {
    severity: 'error',
    part: 'resources',
    summary: "A computed field's CEL names a resource or a field that does not exist.",
  },
  'computed-not-sql': {
    severity: 'error',
    part: 'resources',
    summary: 'A computed field is not exists/count over comparisons joined by &&, so it cannot run as a SQL subquery.',
  },
  'unknown-view-field': {
    severity: 'error',
    part: 'resources',
    summary: 'A view names a field the resource does not have.',
  },
  'view-name-clash': {
    severity: 'error',
    part: 'resources',
    summary: 'A computed field or view whose name is taken by a field, or whose schema name another schema has.',
  },
  'unknown-view': {
    severity: 'error',
    part: 'resources',
    summary: 'A reference or an operation names a view its resource does not have.',
  },
  // states
  'unknown-state': {
    severity: 'error',
    part: 'states',
    summary: 'A transition or setting names a state that is not declared.',
  },
  'missing-initial-state': { severity: 'error', part: 'states', summary: 'A state machine has no initial state.' },
  'unknown-initial-state': {
    severity: 'error',
    part: 'states',
    summary: 'The initial state is not one of the states.',
  },
  'unreachable-state': {
    severity: 'error',
    part: 'states',
    summary: 'No chain of transitions leads from the initial state to this state.',
  },
  'dead-end-state': { severity: 'warning', part: 'states', summary: 'A state that is not final has no way out.' },
  'transition-from-final-state': { severity: 'error', part: 'states', summary: 'A transition leaves a final state.' },
  'invalid-guard': { severity: 'error', part: 'states', summary: 'A `when` guard is not a valid CEL expression.' },
  'unknown-cel-name': {
    severity: 'error',
    part: 'states',
    summary: 'A guard or rule names a field or variable that does not exist (record.titel, principal.rolez).',
  },
  'invalid-duration': {
    severity: 'error',
    part: 'states',
    summary: 'A duration is not like 10s, 5m, 24h, 7d or ISO 8601 (PT24H).',
  },
  'state-field-clash': {
    severity: 'error',
    part: 'states',
    summary: 'The state field is also declared as an ordinary field of another type.',
  },
  // endpoints
  'invalid-session': {
    severity: 'error',
    part: 'endpoints',
    summary:
      'A session that cannot work: its scheme cannot sign, its identifier or password field is missing, its token member is taken.',
  },
  'unknown-operation-resource': {
    severity: 'error',
    part: 'endpoints',
    summary: 'Endpoints are declared for a resource that does not exist.',
  },
  'unmatched-path-parameter': {
    severity: 'error',
    part: 'endpoints',
    summary: 'A path parameter matches no declared parameter or parent reference.',
  },
  'duplicate-route': { severity: 'error', part: 'endpoints', summary: 'Two endpoints share a method and path.' },
  'key-not-unique': {
    severity: 'error',
    part: 'endpoints',
    summary: 'A natural key is not unique: its field is not `unique`, or no compound unique key covers its fields.',
  },
  'invalid-sequence': {
    severity: 'error',
    part: 'resources',
    summary: 'A `sequence` field is not an integer, or names no ref field of its resource.',
  },
  'reserved-path': {
    severity: 'error',
    part: 'endpoints',
    summary:
      'An endpoint path is one the service serves itself (/docs, /openapi.json, /asyncapi.json, /healthz, /readyz, /_ninefold).',
  },
  'unknown-filter-field': {
    severity: 'error',
    part: 'endpoints',
    summary: 'A list filter names a field the resource does not have.',
  },
  'unknown-sort-field': {
    severity: 'error',
    part: 'endpoints',
    summary: 'A list sort names a field the resource does not have.',
  },
  'never-filled-field': {
    severity: 'error',
    part: 'endpoints',
    summary: 'A list filters or sorts on a read-only field that nothing ever fills, so it is always null.',
  },
  'unknown-expand-field': {
    severity: 'error',
    part: 'endpoints',
    summary: 'An expand names a field that is not a reference.',
  },
  'invalid-handler': { severity: 'error', part: 'endpoints', summary: 'A handler is not written module#export.' },
  'invalid-page-size': { severity: 'error', part: 'endpoints', summary: 'A default page size above the maximum.' },
  'wire-name-clash': {
    severity: 'error',
    part: 'endpoints',
    summary: 'The wire naming gives two fields one name, or the `object` member has the name of a field.',
  },
  'envelope-names-field': {
    severity: 'warning',
    part: 'endpoints',
    summary: 'A single-record envelope has the name of one of the record’s fields.',
  },
  'paging-member-unused': {
    severity: 'error',
    part: 'endpoints',
    summary: 'A list member the paging style never fills (a total for starting_after, a next cursor for offset…).',
  },
  'bare-list-members': {
    severity: 'error',
    part: 'endpoints',
    summary: 'A list answered as a bare array (items: null) also names members it has nowhere to put.',
  },
  'list-member-clash': { severity: 'error', part: 'endpoints', summary: 'Two members of a list answer share a name.' },
  'unknown-list-template': {
    severity: 'error',
    part: 'endpoints',
    summary: 'A list extra uses a template variable other than {path}.',
  },
  'unknown-list-param-path': {
    severity: 'error',
    part: 'endpoints',
    summary: 'A list parameter names a field, reference path, join resource or join reference that does not exist.',
  },
  'list-param-not-sql': {
    severity: 'error',
    part: 'endpoints',
    summary: 'A list parameter compares a field SQL cannot compare, or with an operator its type does not take.',
  },
  'list-filter-not-sql': {
    severity: 'error',
    part: 'endpoints',
    summary: "A named list's CEL filter is not one exists(...) that compiles to a SQL subquery, or names nothing.",
  },
  'invalid-named-list': {
    severity: 'error',
    part: 'endpoints',
    summary: 'A named list has neither filter nor distinct, a path with parameters, or a distinct field it lacks.',
  },
  'relation-not-join': {
    severity: 'error',
    part: 'endpoints',
    summary: 'A relation whose caller or target is not a reference field of the join resource (or both are one).',
  },
  'relation-path-params': {
    severity: 'error',
    part: 'endpoints',
    summary: "A relation's path parameters do not name the target by its key (or its id).",
  },
  'relation-not-unique': {
    severity: 'warning',
    part: 'endpoints',
    summary: 'A relation without a unique key on its caller and target pair.',
  },
  // auth
  'unknown-scheme': {
    severity: 'error',
    part: 'auth',
    summary: 'A requirement names an authentication scheme that is not declared.',
  },
  'incomplete-scheme': {
    severity: 'error',
    part: 'auth',
    summary: 'A scheme lacks what its type needs (apiKey without name, bearer without key…).',
  },
  'misplaced-scheme-option': {
    severity: 'error',
    part: 'auth',
    summary: 'A scheme option its type does not have: prefix on a non-apiKey scheme, scheme on a non-bearer one.',
  },
  'key-prefix-mismatch': {
    severity: 'error',
    part: 'auth',
    summary: 'Two apiKey schemes with different key prefixes (they read one key store).',
  },
  'rule-unknown-resource': {
    severity: 'error',
    part: 'auth',
    summary: 'Rules are declared for a resource that does not exist.',
  },
  'invalid-rule': { severity: 'error', part: 'auth', summary: 'A rule is not a valid CEL expression.' },
  'unknown-transition': {
    severity: 'error',
    part: 'auth',
    summary: 'A rule names a transition the resource does not have.',
  },
  'unknown-role': { severity: 'error', part: 'auth', summary: 'A role is used but not declared under auth.roles.' },
  // events
  'unknown-event': {
    severity: 'error',
    part: 'events',
    summary: 'A name refers to an event that is neither automatic nor declared.',
  },
  'unknown-callback-field': {
    severity: 'error',
    part: 'events',
    summary: 'A callback names an unknown resource or field, or a field that is not a uri string.',
  },
  // errors
  'error-status-out-of-range': {
    severity: 'error',
    part: 'errors',
    summary: 'A catalogued error has a status outside 400–599.',
  },
  'error-code-clash': { severity: 'error', part: 'errors', summary: 'A catalogued code is already a built-in code.' },
  'unknown-error-code': {
    severity: 'error',
    part: 'errors',
    summary: 'An endpoint names an error code that is not in any catalogue.',
  },
  'missing-error-payload': { severity: 'error', part: 'errors', summary: 'format: custom without a payload template.' },
  'error-payload-ignored': {
    severity: 'error',
    part: 'errors',
    summary: 'A payload template with format problem+json, which never uses it.',
  },
  'unknown-error-placeholder': {
    severity: 'error',
    part: 'errors',
    summary: 'A payload template placeholder names nothing an error (or a failing field) has.',
  },
  'unknown-error-remap': {
    severity: 'error',
    part: 'errors',
    summary: 'errors.remap or errors.types names a code that is not in the catalogue.',
  },
  'unknown-field-code': {
    severity: 'error',
    part: 'errors',
    summary: 'errors.fieldCodes or errors.fieldMessages names a field code that does not exist.',
  },
  // limits
  'invalid-rate': { severity: 'error', part: 'limits', summary: 'A rate or quota is not like 100/min.' },
  'invalid-size': { severity: 'error', part: 'limits', summary: 'A size is not like 1mb, 512kb or 100b.' },
  'unknown-limit-target': {
    severity: 'error',
    part: 'limits',
    summary: 'A limit names an endpoint, operation or role that does not exist.',
  },
  'invalid-trust-proxy': {
    severity: 'error',
    part: 'limits',
    summary: 'A trustProxy entry is not an address or CIDR.',
  },
  'invalid-limits-store': { severity: 'error', part: 'limits', summary: 'limits.store is not a redis:// URL.' },
  'limit-conflict': {
    severity: 'error',
    part: 'limits',
    summary:
      'Two limits contradict each other (a URL limit not below the header limit, a header time-out past the body one).',
  },
  // versioning
  'duplicate-version': { severity: 'error', part: 'versioning', summary: 'Two versions share an id.' },
  'unknown-version': {
    severity: 'error',
    part: 'versioning',
    summary: 'A setting names a version that is not declared.',
  },
  'unknown-change-field': {
    severity: 'error',
    part: 'versioning',
    summary: 'A version change names a field or resource that does not exist.',
  },
  'unknown-change-target': {
    severity: 'error',
    part: 'versioning',
    summary: 'A version change names an operation, transition, event type or error code the spec does not declare.',
  },
  'invalid-change': {
    severity: 'error',
    part: 'versioning',
    summary: 'A version change says nothing, lacks what its kind needs, or names values that do not fit.',
  },
  'sunset-before-deprecation': {
    severity: 'error',
    part: 'versioning',
    summary: 'A sunset date before its deprecation date.',
  },
  'invalid-date': { severity: 'error', part: 'versioning', summary: 'A date is not YYYY-MM-DD.' },
} as const satisfies Record<string, { severity: 'error' | 'warning'; part: string; summary: string }>;

export type DiagnosticCode = keyof typeof DIAGNOSTIC_CODES;
export type Severity = 'error' | 'warning';

export interface Diagnostic {
  readonly code: DiagnosticCode;
  readonly severity: Severity;
  readonly message: string;
  readonly file: string;
  /** 1-based; absent when the source has no positions (TypeScript specs). */
  readonly line?: number;
  readonly col?: number;
  /** JSON Pointer into the spec, e.g. /resources/Order/fields/total. */
  readonly pointer: string;
}
