import { type Static, Type } from '@sinclair/typebox';
import { stringEnum } from '../../spec/string-enum.ts';

export const NAMING_STYLES = ['camelCase', 'snake_case'] as const;
export const PAGING_STYLES = ['cursor', 'offset', 'page', 'starting_after'] as const;

const memberName = (description: string) =>
  Type.Union([Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$' }), Type.Null()], { description });

/** The members of a list answer: the items, the paging members, and constant or templated extras. */
export const ListEnvelopeSchema = Type.Object(
  {
    items: Type.Optional(
      memberName('Member holding the page (default data); null answers the page as a bare JSON array.'),
    ),
    next: Type.Optional(memberName('Cursor paging: member holding the next cursor (default nextCursor).')),
    total: Type.Optional(memberName('Member holding the count of every match (offset: total; page: none).')),
    hasMore: Type.Optional(memberName('starting_after paging: member saying whether more follow (has_more).')),
    extras: Type.Optional(
      Type.Record(
        Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$' }),
        Type.Union([Type.String(), Type.Number(), Type.Boolean()]),
        {
          description: 'Constant members; a string may use "{path}", the request path without its query.',
        },
      ),
    ),
  },
  { additionalProperties: false },
);

/** How records travel: field naming, paging, the list envelope and the single-record envelope. */
export const WireSchema = Type.Object(
  {
    naming: Type.Optional(stringEnum(NAMING_STYLES, 'Field names on the wire (default camelCase).')),
    paging: Type.Optional(stringEnum(PAGING_STYLES, 'How lists page (default cursor).')),
    list: Type.Optional(ListEnvelopeSchema),
    envelope: Type.Optional(
      memberName('Single-record envelope of requests and answers: user → {"user": {...}} (default none).'),
    ),
  },
  { additionalProperties: false },
);

export type WireSpec = Static<typeof WireSchema>;
export type ListEnvelopeSpec = Static<typeof ListEnvelopeSchema>;
