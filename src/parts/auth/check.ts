import { ANY_SHAPE, type CelShape } from '../../spec/cel-names.ts';
import { celProblem } from '../../spec/cel-problem.ts';
import { type CheckContext, isRecord, recordEntries } from '../../spec/check-context.ts';
import type { PathSegment } from '../../spec/source-map.ts';
import { suggestion } from '../../spec/validate-shape.ts';
import { checkCelNames, fieldsShape, recordShape } from '../resources/check-cel.ts';
import { fieldMap, knownFieldNames, type Raw, resourceMap, transitionMap } from '../resources/lookup.ts';
import { checkRequirements, checkRoles } from './check-access.ts';

const RULE_OPERATIONS = ['list', 'read', 'create', 'update', 'delete'];

/** Semantic checks of part: auth. */
export const checkAuth = (ctx: CheckContext): void => {
  const auth = isRecord(ctx.spec.auth) ? ctx.spec.auth : {};
  const schemes = recordEntries<Raw>(auth.schemes);
  for (const [name, scheme] of schemes) checkScheme(ctx, name, scheme);
  checkKeyWords(ctx, schemes);
  checkRequirements(
    ctx,
    schemes.map(([n]) => n),
  );
  for (const [resource, rules] of recordEntries<Raw>(auth.rules)) checkRules(ctx, resource, rules);
  if (isRecord(auth.roles)) checkRoles(ctx, Object.keys(auth.roles));
};

const checkScheme = (ctx: CheckContext, name: string, scheme: Raw) => {
  const path: PathSegment[] = ['auth', 'schemes', name];
  const lacks = (what: string) =>
    ctx.report('incomplete-scheme', path, `${String(scheme.type)} scheme "${name}" needs ${what}`, 'key');
  switch (scheme.type) {
    case 'apiKey':
      if (scheme.in === undefined) lacks('`in` (where the key is sent)');
      else if (scheme.in !== 'bearer' && scheme.in !== 'basic' && scheme.name === undefined)
        lacks('a `name` (the header, query parameter or cookie the key is sent in)');
      return;
    case 'bearer':
      if (scheme.secret === undefined && scheme.publicKey === undefined && scheme.jwks === undefined)
        lacks('a `secret`, `publicKey` or `jwks` to verify tokens with');
      return;
    case 'oidc':
      if (scheme.issuer === undefined && scheme.jwks === undefined) lacks('an `issuer` or `jwks`');
      return;
    case 'basic':
      return checkBasic(ctx, scheme, path, lacks);
  }
};

/** `prefix` belongs to apiKey schemes, all with one prefix (one key store); `scheme` (the word) to bearer and oidc. */
const checkKeyWords = (ctx: CheckContext, schemes: Array<[string, Raw]>) => {
  let first: [string, unknown] | undefined;
  for (const [name, scheme] of schemes) {
    const path: PathSegment[] = ['auth', 'schemes', name];
    if (scheme.prefix !== undefined && scheme.type !== 'apiKey')
      ctx.report('misplaced-scheme-option', [...path, 'prefix'], 'only apiKey schemes have a key `prefix`', 'key');
    if (scheme.scheme !== undefined && scheme.type !== 'bearer' && scheme.type !== 'oidc')
      ctx.report(
        'misplaced-scheme-option',
        [...path, 'scheme'],
        'only bearer and oidc schemes take another Authorization word (`scheme`); an apiKey uses `in: bearer` or `in: basic`',
        'key',
      );
    if (scheme.type !== 'apiKey') continue;
    const prefix = scheme.prefix ?? 'nfk_';
    if (!first) first = [name, prefix];
    else if (first[1] !== prefix)
      ctx.report(
        'key-prefix-mismatch',
        scheme.prefix === undefined ? path : [...path, 'prefix'],
        `every apiKey scheme reads the same keys: "${name}" has prefix ${String(prefix)}, "${first[0]}" ${String(first[1])}`,
        scheme.prefix === undefined ? 'key' : 'value',
      );
  }
};

const checkBasic = (ctx: CheckContext, scheme: Raw, path: PathSegment[], lacks: (what: string) => void) => {
  if (typeof scheme.users !== 'string') return lacks('`users`, the resource that stores users');
  const resources = resourceMap(ctx.spec);
  const users = resources.get(scheme.users);
  if (!users) {
    ctx.report(
      'incomplete-scheme',
      [...path, 'users'],
      `no resource "${scheme.users}"${suggestion(scheme.users, [...resources.keys()])}`,
    );
    return;
  }
  const fields = fieldMap(users);
  for (const [key, fallback] of [
    ['usernameField', 'username'],
    ['passwordField', 'password'],
  ] as const) {
    const field = typeof scheme[key] === 'string' ? scheme[key] : fallback;
    if (!fields.has(field))
      ctx.report(
        'incomplete-scheme',
        scheme[key] === undefined ? [...path, 'users'] : [...path, key],
        `${scheme.users} has no field "${field}" (${key})`,
      );
  }
};

/** `input` in a rule: the body of a create or update (its writable fields); nothing for read, list and delete. */
const ruleInput = (resource: Raw, op: string): CelShape => {
  if (op !== 'create' && op !== 'update') return fieldsShape({}, `input (empty in a ${op} rule)`);
  const writable = Object.fromEntries(
    [...fieldMap(resource)].filter(([, f]) => f.readOnly !== true && f.derive === undefined),
  );
  return fieldsShape(writable, `the ${op} body`);
};

const checkRules = (ctx: CheckContext, resource: string, rules: Raw) => {
  const resources = resourceMap(ctx.spec);
  const base: PathSegment[] = ['auth', 'rules', resource];
  const spec = resources.get(resource);
  if (!spec) {
    ctx.report(
      'rule-unknown-resource',
      base,
      `no resource "${resource}"${suggestion(resource, [...resources.keys()])}`,
      'key',
    );
    return;
  }
  const record = recordShape(resource, spec);
  const rule = (text: unknown, path: PathSegment[], input: CelShape) => {
    const problem = typeof text === 'string' ? celProblem(text) : undefined;
    if (problem) ctx.report('invalid-rule', path, `the rule is not valid CEL: ${problem}`);
    checkCelNames(ctx, text, path, 'the rule', { record, input });
  };
  for (const op of RULE_OPERATIONS) rule(rules[op], [...base, op], ruleInput(spec, op));
  const transitions = transitionMap(spec);
  if (isRecord(rules.transitions))
    for (const [t, text] of Object.entries(rules.transitions)) {
      const transition = transitions.get(t);
      if (!transition)
        ctx.report(
          'unknown-transition',
          [...base, 'transitions', t],
          `${resource} has no transition "${t}"${suggestion(t, [...transitions.keys()])}`,
          'key',
        );
      const input = transition ? fieldsShape(transition.input, `the input of ${t}`) : ANY_SHAPE;
      rule(text, [...base, 'transitions', t], input);
    }
  if (typeof rules.owner === 'string') {
    const known = [...knownFieldNames(spec)];
    if (!known.includes(rules.owner))
      ctx.report(
        'unknown-field',
        [...base, 'owner'],
        `${resource} has no field "${rules.owner}"${suggestion(rules.owner, known)}`,
      );
  }
};
