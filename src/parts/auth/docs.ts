import type { Plan } from '../../plan/types.ts';
import {
  code,
  codes,
  type DocBlock,
  type DocSection,
  heading,
  type Inline,
  notShownSection,
  paragraph,
  type Span,
  table,
} from '../docs-model.ts';
import { accessSpans } from '../endpoints/access-docs.ts';
import type { SchemeSchema } from './schema.ts';

export const AUTH_HEADING = 'Authentication';
const NOT_SHOWN = 'Authentication scheme, credential names and credential placement: not shown.';
const RULE_ACTIONS = ['list', 'read', 'create', 'update', 'delete'] as const;

type Scheme = (typeof SchemeSchema)['static'];

/** Where a caller puts the credential: [credential name, placement]. */
const credential = (s: Scheme): [Inline, string] => {
  switch (s.type) {
    case 'apiKey':
      return [code(s.name ?? 'X-Api-Key'), s.in ?? 'header'];
    case 'basic':
      return [code('Authorization: Basic <base64 user:password>'), 'header'];
    default:
      return [code('Authorization: Bearer <token>'), 'header'];
  }
};

const schemeDetails = (s: Scheme): Span[] => {
  const out: Span[][] = [];
  if (s.format) out.push([`format ${s.format}`]);
  if (s.algorithms) out.push(['algorithms ', ...codes(s.algorithms)]);
  if (s.issuer) out.push(['issuer ', code(s.issuer)]);
  if (s.audience) out.push(['audience ', code(s.audience)]);
  if (s.jwks) out.push(['keys from ', code(s.jwks)]);
  if (s.subjectClaim) out.push(['subject claim ', code(s.subjectClaim)]);
  if (s.rolesClaim) out.push(['roles claim ', code(s.rolesClaim)]);
  if (s.users) out.push(['users in ', code(s.users)]);
  if (s.realm) out.push([`realm ${s.realm}`]);
  return out.flatMap((spans, i) => (i ? ['; ', ...spans] : spans));
};

/** Part 5: schemes with credential name and placement, the default requirement, roles and per-record rules. */
export const authDocs = (plan: Plan): DocSection => {
  const auth = plan.spec.auth;
  const schemes = Object.entries(auth?.schemes ?? {});
  if (!auth || !schemes.length) return notShownSection('auth', AUTH_HEADING, NOT_SHOWN);
  const blocks: DocBlock[] = [
    table(
      ['Scheme', 'Type', 'Credential', 'Placement', 'Details', 'Description'],
      schemes.map(([name, s]) => [code(name), s.type, ...credential(s), schemeDetails(s), s.description ?? '']),
    ),
    paragraph(
      'Every endpoint requires ',
      ...accessSpans(plan.auth.require, []),
      ' unless its entry under Endpoints says otherwise.',
    ),
  ];
  const roles = Object.entries(auth.roles ?? {});
  if (roles.length)
    blocks.push(
      heading(3, 'Roles'),
      table(
        ['Role', 'Description'],
        roles.map(([r, d]) => [code(r), d]),
      ),
    );
  const rules = Object.entries(auth.rules ?? {});
  if (rules.length) {
    blocks.push(
      heading(3, 'Per-record rules'),
      paragraph(
        'Each rule is a CEL expression over ',
        code('principal'),
        ' and ',
        code('record'),
        ', checked per record.',
      ),
    );
    const rows: Inline[][] = [];
    for (const [resource, r] of rules) {
      if (r.owner) rows.push([resource, 'owner', ['field ', code(r.owner), ' is set to the caller on create']]);
      for (const action of RULE_ACTIONS) {
        const rule = r[action];
        if (rule) rows.push([resource, action, code(rule)]);
      }
      for (const [t, rule] of Object.entries(r.transitions ?? {})) rows.push([resource, `transition ${t}`, code(rule)]);
    }
    blocks.push(table(['Resource', 'Action', 'Rule'], rows));
  }
  return { part: 'auth', heading: AUTH_HEADING, shown: true, blocks };
};
