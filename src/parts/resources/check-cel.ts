import { ANY_SHAPE, type CelShape, celNameProblems } from '../../spec/cel-names.ts';
import { type CheckContext, isRecord, recordEntries } from '../../spec/check-context.ts';
import type { PathSegment } from '../../spec/source-map.ts';
import type { Principal } from '../auth/principal.ts';
import { type Raw, stateFieldOf } from './lookup.ts';

const scalar = (label: string, type: string): CelShape => ({ kind: 'value', label, type });

/** A field's value as CEL sees it: objects and arrays keep their structure, json is free-form. */
const fieldShape = (field: Raw, label: string): CelShape => {
  if (field.type === 'object') return fieldsShape(field.fields, label);
  if (field.type === 'array')
    return { kind: 'list', label, item: isRecord(field.items) ? fieldShape(field.items, `${label}[]`) : ANY_SHAPE };
  return typeof field.type === 'string' && field.type !== 'json' ? scalar(label, field.type) : ANY_SHAPE;
};

/** A map of fields as CEL sees it (an object field, a transition's input, a create body); `extra` comes first. */
export const fieldsShape = (
  fields: unknown,
  label: string,
  extra: ReadonlyArray<readonly [string, CelShape]> = [],
): CelShape => ({
  kind: 'object',
  label,
  fields: new Map([
    ...extra,
    ...recordEntries<Raw>(fields).map(([name, f]): [string, CelShape] => [name, fieldShape(f, `${label}.${name}`)]),
  ]),
});

/** `record` in guards and rules: the system fields, the state field and the declared fields. */
export const recordShape = (name: string, resource: Raw): CelShape => {
  const stateField = stateFieldOf(resource);
  return fieldsShape(resource.fields, name, [
    ['id', scalar(`${name}.id`, 'string')],
    ['createdAt', scalar(`${name}.createdAt`, 'datetime')],
    ['updatedAt', scalar(`${name}.updatedAt`, 'datetime')],
    ['revision', scalar(`${name}.revision`, 'integer')],
    ...(stateField ? [[stateField, scalar(`${name}.${stateField}`, 'string')] as const] : []),
  ]);
};

/** `principal`, as celPrincipal (src/parts/auth/principal.ts) hands it to guards and rules. */
const PRINCIPAL_FIELDS = {
  subject: scalar('principal.subject', 'string'),
  roles: { kind: 'list', label: 'principal.roles', item: scalar('principal.roles[]', 'string') },
  scheme: scalar('principal.scheme', 'string'),
  claims: ANY_SHAPE,
} as const satisfies Record<keyof Principal, CelShape>;
const PRINCIPAL: CelShape = { kind: 'object', label: 'principal', fields: new Map(Object.entries(PRINCIPAL_FIELDS)) };

/** Reports each name a guard or rule uses that `record`, `input` or `principal` does not have. */
export const checkCelNames = (
  ctx: CheckContext,
  expression: unknown,
  path: readonly PathSegment[],
  what: string,
  vars: { readonly record: CelShape; readonly input: CelShape },
) => {
  if (typeof expression !== 'string') return;
  const roots = new Map([
    ['record', vars.record],
    ['input', vars.input],
    ['principal', PRINCIPAL],
  ]);
  for (const problem of celNameProblems(expression, roots))
    ctx.report('unknown-cel-name', path, `${what} names ${problem.text}, but ${problem.reason}`, {
      offset: problem.offset,
    });
};
