import type { Plan } from '../../plan/types.ts';
import {
  code,
  type DocBlock,
  type DocSection,
  heading,
  list,
  notShownSection,
  paragraph,
  type Span,
} from '../docs-model.ts';
import type { ChangeSchema, VersioningSchema } from './schema.ts';

export const VERSIONING_HEADING = 'Versioning';
const NOT_SHOWN = 'Versioning scheme and version identifiers: not shown.';

type Versioning = (typeof VersioningSchema)['static'];
type Change = (typeof ChangeSchema)['static'];

/** How a request names its version under each scheme. */
const selection = (v: Versioning): Span[] => {
  switch (v.scheme) {
    case 'header':
      return ['the ', code(v.name ?? 'Api-Version'), ' request header'];
    case 'query':
      return ['the ', code(v.name ?? 'version'), ' query parameter'];
    case 'path':
      return ['the first path segment, as in ', code('/<version>/…')];
    default:
      return ['a ', code(`${v.name ?? 'version'}=`), ' parameter of the media type'];
  }
};

/** The changes not about a resource's fields, in words. */
const describeRoutes = (c: Change): Span[] => {
  const out: Span[] = [];
  const op = (name: string | undefined, added: boolean) => {
    if (name)
      out.push(
        code(name),
        added
          ? ' is new; earlier versions answer 404 there and their documents leave it out. '
          : ' is removed; it answers 404 from this version on, and earlier versions still have it. ',
      );
  };
  op(c['add-operation'], true);
  op(c['remove-operation'], false);
  const transition = (name: string | undefined, added: boolean) => {
    if (name)
      out.push(
        'the transition ',
        code(name),
        added
          ? ' is new; earlier versions answer 404 for it and leave it out of allowedTransitions. '
          : ' is removed; it answers 404 from this version on, and earlier versions still have it. ',
      );
  };
  transition(c['add-transition'], true);
  transition(c['remove-transition'], false);
  if (c['add-event'])
    out.push(
      'the event ',
      code(c['add-event']),
      ' is new; webhook endpoints of earlier versions neither get it nor may subscribe to it. ',
    );
  if (c['remove-event'])
    out.push(
      'the event ',
      code(c['remove-event']),
      ' is removed; only webhook endpoints of earlier versions still get it. ',
    );
  if (c.error) {
    const { code: now, was } = c.error;
    const status = was.status ? ` with status ${was.status}` : '';
    if (was.code && was.code !== now)
      out.push(
        'the error ',
        code(was.code),
        ' is answered as ',
        code(now),
        '; earlier versions still get ',
        code(was.code),
        `${status}. `,
      );
    else out.push('the error ', code(now), ` changes status; earlier versions still get it${status}. `);
  }
  return out;
};

/** One change in words, saying what a caller of the versions before it sends and sees. */
const describeChange = (c: Change): Span[] => {
  const routes = describeRoutes(c);
  if (!c.resource) return [...routes, ...(c.description ? [c.description] : [])];
  const out: Span[] = [`${c.resource}: `, ...routes];
  if (c.rename)
    out.push(
      code(c.rename.from),
      ' is renamed ',
      code(c.rename.to),
      '; earlier versions still send and see ',
      code(c.rename.from),
      ', and filter and sort on it.',
    );
  if (c.add) out.push(code(c.add), ' is added; earlier versions neither see it nor may send it.');
  if (c.remove)
    out.push(
      code(c.remove),
      ' is removed; earlier versions may still send it (it is ignored) and ',
      ...(c.default === undefined ? ['no longer see it.'] : ['see it as ', code(JSON.stringify(c.default)), '.']),
    );
  if (c.retype)
    out.push(
      code(c.retype.field),
      ` changes type; earlier versions send and see it as ${c.retype.from.type}, converted where it has an exact spelling.`,
    );
  if (c.require)
    out.push(
      code(c.require),
      ' is required; ',
      ...(c.default === undefined
        ? ['earlier versions must send it too.']
        : ['a request of an earlier version without it gets ', code(JSON.stringify(c.default)), '.']),
    );
  const e = c['enum-add'];
  if (e)
    out.push(
      code(e.field),
      ' may be ',
      ...e.values.flatMap((v, i) => [...(i ? [', '] : []), code(v)]),
      '; earlier versions may not send it and see ',
      code(e.fallback),
      ' instead.',
    );
  if (c.move)
    out.push(
      code(c.move.from),
      ' moves into ',
      code(c.move.to),
      '; earlier versions still send and see it at the top level.',
    );
  if (c.transform)
    out.push(
      'records of earlier versions pass through ',
      code(c.transform),
      ' (its request function on the way in, its answer function on the way out).',
    );
  if (c.description) out.push(` ${c.description}`);
  return out;
};

/** The changelog, newest version first: what each changed, and when it retires. */
const changelog = (v: Versioning): DocBlock[] =>
  [...v.versions].reverse().flatMap((version, i) => {
    const dep = v.deprecated?.[version.id];
    const retired = dep
      ? [
          `Deprecated${dep.deprecation ? ` since ${dep.deprecation}` : ''}`,
          dep.sunset ? `; answers 410 from ${dep.sunset}.` : '.',
        ].join('')
      : '';
    const first = i === v.versions.length - 1;
    const changes = version.changes ?? [];
    return [
      heading(4, code(version.id), i === 0 ? ' (newest)' : ''),
      paragraph(
        ...(version.description ? [`${version.description} `] : []),
        ...(retired ? [`${retired} `] : []),
        'Its OpenAPI document: ',
        code(`/openapi/${version.id}.json`),
        '.',
      ),
      changes.length
        ? list(changes.map(describeChange))
        : paragraph(first ? 'The first version.' : 'No changes to records.'),
    ];
  });

/** Part 9: the scheme, the default version, and a changelog of every version's changes in words, newest first. */
export const versioningDocs = (plan: Plan): DocSection => {
  const v = plan.spec.versioning;
  if (!v) return notShownSection('versioning', VERSIONING_HEADING, NOT_SHOWN);
  const newest = v.versions[v.versions.length - 1]?.id ?? '';
  return {
    part: 'versioning',
    heading: VERSIONING_HEADING,
    shown: true,
    blocks: [
      paragraph(
        `Scheme: ${v.scheme}. A request names its version in `,
        ...selection(v),
        '; without one it gets ',
        code(v.default ?? newest),
        '. Every version is served at once from one data model.',
      ),
      paragraph(
        'Every answer names its version in ',
        code('Api-Version'),
        '; a version not listed here is refused with 400 ',
        code('unsupported_version'),
        '. A request in an older version is translated to the newest before it is validated and stored, and its answer, errors, filters, sorts and webhook payloads are translated back. Answers in a deprecated version carry ',
        code('Deprecation'),
        ', ',
        code('Sunset'),
        ' and ',
        code('Link'),
        '; past its sunset date it answers 410 ',
        code('version_sunset'),
        '.',
      ),
      ...changelog(v),
    ],
  };
};
