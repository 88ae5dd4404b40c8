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
import { accessMatrix, ruleSpans } from './access-matrix.ts';
import { effectiveRules, RECORD_ACTIONS, type RulesSpec } from './rule-defaults.ts';
import { DEFAULT_KEY_PREFIX, type SchemeSchema } from './schema.ts';

export const AUTH_HEADING = 'Authentication';
const NOT_SHOWN = 'Authentication scheme, credential names and credential placement: not shown.';

type Scheme = (typeof SchemeSchema)['static'];

/** Where a caller puts the credential: [credential name, placement]. */
const credential = (s: Scheme): [Inline, string] => {
  switch (s.type) {
    case 'apiKey':
      if (s.in === 'bearer') return [code('Authorization: Bearer <key>'), 'header'];
      if (s.in === 'basic') return [code('Authorization: Basic <base64 key:>'), 'header'];
      return [code(s.name ?? 'X-Api-Key'), s.in ?? 'header'];
    case 'basic':
      return [code('Authorization: Basic <base64 user:password>'), 'header'];
    default:
      return [code(`Authorization: ${s.scheme ?? 'Bearer'} <token>`), 'header'];
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
  if (s.type === 'apiKey') out.push(['keys begin ', code(s.prefix ?? DEFAULT_KEY_PREFIX)]);
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
  for (const r of plan.resources) {
    const session = r.session;
    if (!session) continue;
    const word = plan.auth.schemes.get(session.scheme)?.scheme ?? 'Bearer';
    blocks.push(
      paragraph(
        `Signing in: ${r.name} is a user store. Creating one signs up (the `,
        code(session.password),
        ' is stored as an scrypt hash); ',
        code(`POST ${plan.service.basePath}${session.signIn}`),
        ' takes ',
        code(session.identifier),
        ' and ',
        code(session.password),
        ', answers an unknown user and a wrong password alike, and counts failures (10 a minute per identifier and per address, then 429). Both, and the caller’s own record, answer with ',
        code(session.field),
        `: a JWT signed with the secret of `,
        code(session.scheme),
        `, good for ${Math.round(session.expiresInMs / 3_600_000)} h, sent back as `,
        code(`Authorization: ${word} <token>`),
        '.',
      ),
    );
  }
  const roles = Object.entries(auth.roles ?? {});
  if (roles.length)
    blocks.push(
      heading(3, 'Roles'),
      table(
        ['Role', 'Description'],
        roles.map(([r, d]) => [code(r), d]),
      ),
    );
  blocks.push(...ruleBlocks(plan), ...matrixBlocks(plan));
  return { part: 'auth', heading: AUTH_HEADING, shown: true, blocks };
};

/** Every action of each resource with rules, defaults applied: deny by default, owner, list as read, transition as update. */
const ruleBlocks = (plan: Plan): DocBlock[] => {
  const rules = Object.entries((plan.spec.auth?.rules ?? {}) as Record<string, RulesSpec>);
  if (!rules.length) return [];
  const rows: Inline[][] = [];
  for (const [resource, spec] of rules) {
    const transitions = plan.resourcesByName.get(resource)?.states?.transitions.map((t) => t.name) ?? [];
    const effective = effectiveRules(spec, transitions);
    if (!effective) continue;
    if (effective.owner)
      rows.push([resource, 'owner', ['field ', code(effective.owner), ' is set to the caller on create']]);
    for (const action of RECORD_ACTIONS) rows.push([resource, action, ruleSpans(effective[action])]);
    for (const [t, rule] of effective.transitions) rows.push([resource, `transition ${t}`, ruleSpans(rule)]);
  }
  return [
    heading(3, 'Per-record rules'),
    paragraph(
      'Each rule is a CEL expression over ',
      code('principal'),
      ', ',
      code('record'),
      ' and ',
      code('input'),
      ', checked per record. Deny by default: an action without a rule is refused, a list follows the read rule and a transition the update rule.',
    ),
    table(['Resource', 'Action', 'Rule'], rows),
  ];
};

/** What each role may do with each resource (no table without declared roles). */
const matrixBlocks = (plan: Plan): DocBlock[] => {
  if (!Object.keys(plan.spec.auth?.roles ?? {}).length) return [];
  return [
    heading(3, 'What each role may do'),
    paragraph(
      'For a caller holding only that role, after the route’s roles and the per-record rules: ',
      code('where …'),
      ' names the records it may act on. A caller with several roles may do what any of them may; custom handlers reach records under the same rules.',
    ),
    ...accessMatrix(plan).flatMap((m) => [heading(4, m.resource), table(m.columns, m.rows)]),
  ];
};
