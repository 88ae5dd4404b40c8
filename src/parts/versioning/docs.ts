import type { Plan } from '../../plan/types.ts';
import { code, type DocSection, type Inline, notShownSection, paragraph, type Span, table } from '../docs-model.ts';
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

const describeChange = (c: Change): Span[] => {
  const out: Span[] = [`${c.resource}: `];
  if (c.rename) out.push(code(c.rename.from), ' renamed to ', code(c.rename.to));
  if (c.add) out.push(code(c.add), ' added');
  if (c.remove)
    out.push(
      code(c.remove),
      ' removed',
      ...(c.default === undefined ? [] : [' (older versions show ', code(JSON.stringify(c.default)), ')']),
    );
  if (c.retype) out.push(code(c.retype.field), ` changed type (was ${c.retype.from.type})`);
  if (c.description) out.push(` — ${c.description}`);
  return out;
};

/** Part 9: the scheme, the default version, each version's changes, and deprecation and sunset dates. */
export const versioningDocs = (plan: Plan): DocSection => {
  const v = plan.spec.versioning;
  if (!v) return notShownSection('versioning', VERSIONING_HEADING, NOT_SHOWN);
  const newest = v.versions[v.versions.length - 1]?.id ?? '';
  const rows = v.versions.map((version): Inline[] => {
    const changes = (version.changes ?? []).flatMap((c, i) => [...(i ? ['; '] : []), ...describeChange(c)]);
    const dep = v.deprecated?.[version.id];
    return [
      code(version.id),
      version.description ?? '',
      changes.length ? changes : 'none',
      dep ? (dep.deprecation ?? 'yes') : '',
      dep?.sunset ?? '',
    ];
  });
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
      table(['Version', 'Description', 'Changes', 'Deprecated', 'Sunset'], rows),
    ],
  };
};
