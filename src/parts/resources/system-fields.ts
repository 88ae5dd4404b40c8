/** Fields every record has, owned by the engine. A spec may not declare them. */
export const SYSTEM_FIELDS = ['id', 'createdAt', 'updatedAt'] as const;

/** Names that would collide with the engine or with Object.prototype. */
export const RESERVED_FIELD_NAMES: ReadonlySet<string> = new Set([
  ...SYSTEM_FIELDS,
  '__proto__',
  'constructor',
  'prototype',
  'hasOwnProperty',
  'toString',
  'valueOf',
  'isPrototypeOf',
  'propertyIsEnumerable',
  'toLocaleString',
]);
