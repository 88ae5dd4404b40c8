import { type Static, Type } from '@sinclair/typebox';
import { stringEnum } from '../../spec/string-enum.ts';
import { FieldsSchema } from '../resources/field-schema.ts';
import { OPERATIONS } from './operations.ts';
import { ListParamSchema, NamedListSchema, RelationSchema } from './relation-schema.ts';
import { WireSchema } from './wire-schema.ts';

export { OPERATIONS } from './operations.ts';
export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** Who may call an endpoint: `public`, a list of schemes (any of them), or `{ all: [...] }`. */
export const AccessSchema = Type.Union([
  Type.Literal('public'),
  Type.Array(Type.String(), { minItems: 1 }),
  Type.Object({ all: Type.Array(Type.String(), { minItems: 1 }) }, { additionalProperties: false }),
]);

export const OperationOverrideSchema = Type.Object(
  {
    require: Type.Optional(AccessSchema),
    roles: Type.Optional(Type.Array(Type.String())),
    summary: Type.Optional(Type.String()),
    path: Type.Optional(
      Type.String({ pattern: '^/', description: "This operation's own path, e.g. /articles/{slug}." }),
    ),
    method: Type.Optional(
      stringEnum(
        ['PATCH', 'PUT', 'POST'] as const,
        'update only: PUT or POST (Stripe) serves the update (merge semantics) instead of PATCH.',
      ),
    ),
    view: Type.Optional(Type.String({ description: 'A view of the resource this operation answers with.' })),
  },
  { additionalProperties: false },
);

export const SelfSchema = Type.Object(
  {
    path: Type.String({ pattern: '^/', description: "The caller's own record, e.g. /user." }),
    operations: Type.Array(stringEnum(['get', 'update', 'replace', 'delete'] as const), { minItems: 1 }),
  },
  {
    additionalProperties: false,
    description: "The caller's own record: the one whose id (or key field) is the principal's subject.",
  },
);

export const SessionSchema = Type.Object(
  {
    scheme: Type.String({
      description: 'The bearer (JWT) scheme whose secret signs the tokens, and which reads them.',
    }),
    field: Type.Optional(Type.String({ description: 'The answer member holding the token (default token).' })),
    identifier: Type.String({ description: 'Sign-in: the unique field naming the user (email, username).' }),
    password: Type.Optional(Type.String({ description: 'The password field (default password), stored hashed.' })),
    signIn: Type.String({ pattern: '^/', description: 'Sign-in: POST path taking the identifier and password.' }),
    expiresIn: Type.Optional(Type.String({ description: 'How long a token is good for (default 24h).' })),
  },
  {
    additionalProperties: false,
    description:
      'A user store: create signs up (password hashed), POST signIn checks the password; both, and the caller’s own record, answer with a freshly signed token.',
  },
);

export const KeySchema = Type.Union([Type.String(), Type.Array(Type.String(), { minItems: 1 })], {
  description: 'Natural key: the item path binds this unique field (or these fields, a compound unique key).',
});

export const PageSizeSchema = Type.Object(
  { default: Type.Optional(Type.Integer({ minimum: 1 })), max: Type.Optional(Type.Integer({ minimum: 1 })) },
  { additionalProperties: false },
);

export const ListOptionsSchema = Type.Object(
  {
    filter: Type.Optional(Type.Array(Type.String(), { description: 'Fields a caller may filter on.' })),
    sort: Type.Optional(Type.Array(Type.String(), { description: 'Fields a caller may sort on.' })),
    defaultSort: Type.Optional(Type.String({ description: 'Like -createdAt (default createdAt).' })),
    pageSize: Type.Optional(PageSizeSchema),
    expand: Type.Optional(Type.Array(Type.String(), { description: 'Reference fields that may be expanded.' })),
    params: Type.Optional(
      Type.Record(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$' }), ListParamSchema, {
        description: 'Query parameters named as the interface names them: ?author=jake for author.username.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const ResourceEndpointsSchema = Type.Object(
  {
    operations: Type.Optional(Type.Array(stringEnum(OPERATIONS))),
    path: Type.Optional(Type.String({ description: 'Collection path, e.g. /customers/{customerId}/orders.' })),
    list: Type.Optional(ListOptionsSchema),
    require: Type.Optional(AccessSchema),
    wire: Type.Optional(WireSchema),
    key: Type.Optional(KeySchema),
    self: Type.Optional(SelfSchema),
    lists: Type.Optional(
      Type.Record(Type.String({ pattern: '^[a-z][A-Za-z0-9]*$' }), NamedListSchema, {
        description: 'Lists of their own paths: a CEL filter (a feed) or the distinct values of a field (tags).',
      }),
    ),
    relation: Type.Optional(RelationSchema),
    session: Type.Optional(SessionSchema),
    overrides: Type.Optional(
      Type.Object(Object.fromEntries(OPERATIONS.map((o) => [o, Type.Optional(OperationOverrideSchema)])), {
        additionalProperties: false,
        description: 'Per-operation access, roles, path and (update) method.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const CustomEndpointSchema = Type.Object(
  {
    name: Type.String({ pattern: '^[a-z][A-Za-z0-9]*$' }),
    method: stringEnum(HTTP_METHODS),
    path: Type.String({ pattern: '^/' }),
    summary: Type.Optional(Type.String()),
    handler: Type.String({ description: 'Module and export: ./handlers.ts#customerSummary' }),
    request: Type.Optional(
      Type.Object(
        { params: Type.Optional(FieldsSchema), query: Type.Optional(FieldsSchema), body: Type.Optional(FieldsSchema) },
        { additionalProperties: false },
      ),
    ),
    response: Type.Optional(
      Type.Object(
        {
          status: Type.Optional(Type.Integer({ minimum: 200, maximum: 299 })),
          fields: Type.Optional(FieldsSchema),
          list: Type.Optional(Type.Boolean({ description: 'The response is {data: [...]} of these fields.' })),
        },
        { additionalProperties: false },
      ),
    ),
    errors: Type.Optional(Type.Array(Type.String(), { description: 'Catalogue codes the handler may fail with.' })),
    require: Type.Optional(AccessSchema),
    roles: Type.Optional(Type.Array(Type.String())),
  },
  { additionalProperties: false },
);

/** Part 4 — endpoints: one entry per resource, plus custom endpoints. */
export const EndpointsSchema = Type.Object(
  {
    custom: Type.Optional(Type.Array(CustomEndpointSchema)),
    basePath: Type.Optional(Type.String({ pattern: '^(/[A-Za-z0-9._~-]+)*$' })),
    wire: Type.Optional(WireSchema),
  },
  {
    additionalProperties: ResourceEndpointsSchema,
    description: 'Part 4: endpoints. Keys are resource names; `custom` lists custom endpoints.',
  },
);

export type ResourceEndpointsSpec = Static<typeof ResourceEndpointsSchema>;
export type CustomEndpointSpec = Static<typeof CustomEndpointSchema>;
