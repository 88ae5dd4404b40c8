import { Type } from '@sinclair/typebox';

/** Part 1 — what the service does. */
export const PurposeSchema = Type.Object(
  {
    name: Type.String({
      pattern: '^[a-z][a-z0-9-]*$',
      description: 'Machine name of the service (lower-case, kebab-case); names the default database file.',
    }),
    title: Type.Optional(Type.String({ description: 'Human title, used as the document heading.' })),
    purpose: Type.Optional(Type.String({ description: 'One or two sentences: what the service is for.' })),
    behaviour: Type.Optional(
      Type.String({ description: 'Prose: how the service behaves, in as much detail as needed.' }),
    ),
    contact: Type.Optional(
      Type.Object(
        { name: Type.Optional(Type.String()), email: Type.Optional(Type.String()), url: Type.Optional(Type.String()) },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false, description: 'Part 1: the service, its purpose and behaviour.' },
);
