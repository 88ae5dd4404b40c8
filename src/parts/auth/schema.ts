import { Type } from '@sinclair/typebox';
import { namedRecord } from '../../spec/named-record.ts';
import { stringEnum } from '../../spec/string-enum.ts';

import { BUILT_IN_PAGES } from './built-in-pages.ts';

export { BUILT_IN_PAGES, type BuiltInPage } from './built-in-pages.ts';

export const SCHEME_TYPES = ['apiKey', 'bearer', 'basic', 'oidc'] as const;
export const API_KEY_PLACES = ['header', 'query', 'cookie', 'bearer', 'basic'] as const;
/** The prefix of API keys when no apiKey scheme names one. */
export const DEFAULT_KEY_PREFIX = 'nfk_';
export const JWT_ALGORITHMS = [
  'HS256',
  'HS384',
  'HS512',
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'ES256',
  'ES384',
  'EdDSA',
] as const;

/** One authentication scheme; which properties apply depends on `type` (checked semantically). */
export const SchemeSchema = Type.Object(
  {
    type: stringEnum(SCHEME_TYPES),
    description: Type.Optional(Type.String()),
    in: Type.Optional(
      stringEnum(
        API_KEY_PLACES,
        'apiKey: header, query or cookie (with `name`); bearer (Authorization: Bearer <key>) or basic (the key as the Basic user name, empty password).',
      ),
    ),
    name: Type.Optional(Type.String({ description: 'apiKey: the header, query parameter or cookie name.' })),
    prefix: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z][A-Za-z0-9_]{0,31}$',
        description: 'apiKey: what every key this service issues begins with (default nfk_), e.g. sk_test_.',
      }),
    ),
    scheme: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z][A-Za-z0-9!#$%&*+.^_`|~-]{0,31}$',
        description: 'bearer, oidc: the word before the token in Authorization (default Bearer), e.g. Token.',
      }),
    ),
    format: Type.Optional(Type.Literal('jwt')),
    secret: Type.Optional(
      Type.String({ description: 'HS*: env:VAR naming the environment variable holding the secret.' }),
    ),
    publicKey: Type.Optional(Type.String({ description: 'RS*/ES*/EdDSA: PEM text, file:path or env:VAR.' })),
    jwks: Type.Optional(Type.String({ description: 'JWKS file path or https URL.' })),
    algorithms: Type.Optional(Type.Array(stringEnum(JWT_ALGORITHMS), { minItems: 1 })),
    issuer: Type.Optional(Type.String()),
    audience: Type.Optional(Type.String()),
    subjectClaim: Type.Optional(Type.String({ description: 'Claim holding the subject (default sub).' })),
    rolesClaim: Type.Optional(Type.String({ description: 'Claim holding the roles (default roles).' })),
    users: Type.Optional(Type.String({ description: 'basic: the resource that stores users.' })),
    usernameField: Type.Optional(Type.String()),
    passwordField: Type.Optional(Type.String()),
    rolesField: Type.Optional(Type.String()),
    realm: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

export const RecordRulesSchema = Type.Object(
  {
    owner: Type.Optional(
      Type.String({ description: 'Field set to the caller subject on create; rules default to owner-only.' }),
    ),
    list: Type.Optional(Type.String()),
    read: Type.Optional(Type.String()),
    create: Type.Optional(Type.String()),
    update: Type.Optional(Type.String()),
    delete: Type.Optional(Type.String()),
    transitions: Type.Optional(Type.Record(Type.String(), Type.String())),
  },
  { additionalProperties: false },
);

/** Part 5 — authentication and authorisation. */
export const AuthSchema = Type.Object(
  {
    schemes: Type.Optional(namedRecord('^[A-Za-z][A-Za-z0-9_-]*$', SchemeSchema)),
    require: Type.Optional(
      Type.Union([Type.Literal('public'), Type.Array(Type.String(), { minItems: 1 })], {
        description: 'Default for every endpoint: any of these schemes.',
      }),
    ),
    roles: Type.Optional(Type.Record(Type.String(), Type.String(), { description: 'Role name → description.' })),
    rules: Type.Optional(Type.Record(Type.String(), RecordRulesSchema, { description: 'Per-resource CEL rules.' })),
    public: Type.Optional(
      Type.Array(stringEnum(BUILT_IN_PAGES), {
        description:
          'Built-in pages that stay public (default all): health (/healthz, /readyz), openapi (/openapi.json, /asyncapi.json), docs (/docs, /docs/spec). The others need the default requirement.',
      }),
    ),
  },
  { additionalProperties: false, description: 'Part 5: authentication.' },
);
