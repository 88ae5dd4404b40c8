import type { Plan } from '../../plan/types.ts';
import {
  code,
  type DocBlock,
  type DocSection,
  heading,
  type Inline,
  notShownSection,
  paragraph,
  table,
} from '../docs-model.ts';

export const ERRORS_HEADING = 'Errors';
const NOT_SHOWN = 'Error codes, status codes and error payload shape: not shown.';

/** The members of an RFC 9457 problem details object as this service fills them. */
const problemFields = (typeBase: string): Array<[string, string, Inline]> => [
  [
    'type',
    'string (URI)',
    [
      code(`${typeBase}<code>`),
      ', one per catalogue code; ',
      code('rate_limited'),
      ' and ',
      code('quota_exceeded'),
      ' have the registered ',
      code('https://iana.org/assignments/http-problem-types#quota-exceeded'),
      '.',
    ],
  ],
  ['title', 'string', 'The catalogue title of the code.'],
  ['status', 'integer', 'The HTTP status code.'],
  ['detail', 'string', 'What went wrong in this occurrence.'],
  ['instance', 'string', 'The request path.'],
  ['code', 'string', ['The stable catalogue code, such as ', code('not_found'), '.']],
  ['errors', 'array', 'Validation only: one entry per failing field, with a JSON pointer to it.'],
];

const PRESET_WORDS: Record<string, string> = {
  'per-field': 'the per-field payload of RealWorld (Conduit)',
  stripe: 'Stripe’s error payload',
  github: 'GitHub’s error payload',
  custom: 'the service’s own payload',
};

/** A non-problem payload in words: its template, and how codes, messages and types are renamed in it. */
const templateBlocks = (plan: Plan): DocBlock[] => {
  const { errors } = plan;
  const renames = (label: string, map: ReadonlyMap<string, string>): DocBlock[] =>
    map.size ? [paragraph(`${label}: ${[...map].map(([k, v]) => `${k} → ${JSON.stringify(v)}`).join('; ')}.`)] : [];
  return [
    paragraph(
      `Errors use ${PRESET_WORDS[errors.format] ?? errors.format}, sent as `,
      code('application/json'),
      '. "{code}", "{status}", "{title}", "{message}", "{type}", "{field}", "{param}" and "{resource}" are filled in; a key ending in "?" is left out when empty; "$each" is one entry per failing field; "$byField" lists the messages of each failing field. No stack trace or internal detail reaches a client.',
    ),
    { kind: 'code', language: 'json', source: JSON.stringify(errors.payload ?? {}, null, 2) },
    ...renames('Field codes on the wire', errors.fieldCodes),
    ...renames('Field messages', errors.fieldMessages),
    ...renames('"{type}" by code or status class', errors.types),
  ];
};

/** Codes whose answers the spec words differently: message, field, type. */
const wordingBlocks = (plan: Plan): DocBlock[] =>
  plan.errors.wording.size
    ? [
        paragraph('Messages the service gives instead of the occurrence’s own detail:'),
        table(
          ['Code', 'Message', 'About field', 'Type'],
          [...plan.errors.wording].map(([c, w]) => [code(c), w.message ?? '', w.field ?? '', w.type ?? '']),
        ),
      ]
    : [];

const payloadBlocks = (plan: Plan): DocBlock[] => {
  if (plan.errors.format !== 'problem+json' && plan.errors.payload !== undefined)
    return [...templateBlocks(plan), ...wordingBlocks(plan)];
  return [
    paragraph(
      'Every error is an RFC 9457 problem details object, sent as ',
      code('application/problem+json'),
      '. No stack trace or internal detail reaches a client.',
    ),
    table(
      ['Member', 'Type', 'Meaning'],
      problemFields(plan.errors.typeBase).map(([m, t, d]) => [code(m), t, d]),
    ),
    ...wordingBlocks(plan),
  ];
};

/** Part 7: the payload shape and the whole catalogue, built-in codes and the service's own, by status. */
export const errorsDocs = (plan: Plan): DocSection => {
  const hasInterface = plan.resources.length > 0 || plan.custom.length > 0;
  if (!plan.spec.errors && !hasInterface) return notShownSection('errors', ERRORS_HEADING, NOT_SHOWN);
  const entries = [...plan.errors.catalogue.values()].sort((a, b) => a.status - b.status);
  return {
    part: 'errors',
    heading: ERRORS_HEADING,
    shown: true,
    blocks: [
      heading(3, 'Payload'),
      ...payloadBlocks(plan),
      heading(3, 'Catalogue'),
      table(
        ['Code', 'Status', 'Title', 'Source', 'Description'],
        entries.map((e) => [
          code(e.code),
          String(e.status),
          e.title,
          e.builtIn ? 'built-in' : 'service',
          e.description ?? '',
        ]),
      ),
    ],
  };
};
