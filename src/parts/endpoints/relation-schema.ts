import { type Static, Type } from '@sinclair/typebox';
import { stringEnum } from '../../spec/string-enum.ts';

export const LIST_PARAM_OPS = ['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'contains'] as const;

/** A list query parameter named as the interface names it: a field, a path through references, or a join. */
export const ListParamSchema = Type.Object(
  {
    field: Type.String({
      pattern: '^[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)*$',
      description:
        'The field compared: one of the record (tagList), or a path through references (author.username); with join, read on the join record (user.username).',
    }),
    join: Type.Optional(
      Type.String({ description: 'A join resource: records that some record of it points at (through on).' }),
    ),
    on: Type.Optional(
      Type.String({ description: "The join resource's reference to the listed resource (default: its only one)." }),
    ),
    op: Type.Optional(
      stringEnum(LIST_PARAM_OPS, 'How the value compares (default eq; contains, membership, for an array field).'),
    ),
    description: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

/** A list of its own path: the resource's records a CEL condition keeps, or the distinct values of a field. */
export const NamedListSchema = Type.Object(
  {
    path: Type.String({ pattern: '^/', description: 'Its path, e.g. /articles/feed.' }),
    summary: Type.Optional(Type.String()),
    filter: Type.Optional(
      Type.String({
        description:
          'CEL compiled to SQL: exists(Resource, x, <condition>) over record and caller, e.g. exists(Follow, f, f.follower == caller && f.followee == record.author).',
      }),
    ),
    distinct: Type.Optional(
      Type.String({ description: 'Answers the distinct values of this field (every item of an array field).' }),
    ),
    counts: Type.Optional(Type.Boolean({ description: 'distinct: each value with how many records hold it.' })),
    items: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z_][A-Za-z0-9_]*$',
        description: 'distinct: the member holding the values (default: the list envelope items member).',
      }),
    ),
  },
  { additionalProperties: false },
);

/** Add or remove a record of this (join) resource keyed by the caller and the record the path names. */
export const RelationSchema = Type.Object(
  {
    caller: Type.String({ description: 'The reference field set to the caller (the principal subject).' }),
    target: Type.String({ description: 'The reference field set to the record the path names.' }),
    path: Type.String({
      pattern: '^/',
      description: 'Path whose parameters name the target by its key, e.g. /articles/{slug}/favorite.',
    }),
    add: Type.Optional(stringEnum(['POST', 'PUT'] as const, 'The method that adds (default POST).')),
    answer: Type.Optional(
      stringEnum(['target', 'none'] as const, 'target: 200 with the target record (default); none: 204.'),
    ),
    view: Type.Optional(Type.String({ description: 'answer target: a view of the target (default its get view).' })),
    envelope: Type.Optional(
      Type.Union([Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$' }), Type.Null()], {
        description: "answer target: the answer's envelope (default the target's).",
      }),
    ),
    missing: Type.Optional(
      stringEnum(['ok', 'not_found'] as const, 'Removing a relation that does not exist: ok (default) or 404.'),
    ),
  },
  { additionalProperties: false },
);

export type ListParamSpec = Static<typeof ListParamSchema>;
export type NamedListSpec = Static<typeof NamedListSchema>;
export type RelationSpec = Static<typeof RelationSchema>;
