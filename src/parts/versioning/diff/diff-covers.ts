import type { ServiceSpec } from '../../../spec/schema.ts';
import type { ChangeSchema } from '../schema.ts';
import type { DiffCollector, SpecChange } from './diff-collector.ts';

type Change = (typeof ChangeSchema)['static'];
type Version = NonNullable<ServiceSpec['versioning']>['versions'][number];

/** A breaking change a new version's declaration makes safe. */
export interface Cover {
  readonly version: string;
  readonly covers: (change: SpecChange) => boolean;
}

const under = (pointer: string, prefix: string) => pointer === prefix || pointer.startsWith(`${prefix}/`);

/** What each kind beyond rename, add, remove and retype covers (those four are matched by subject in diff-specs). */
const coverOf = (c: Change): ((s: SpecChange) => boolean) | undefined => {
  const fields = `/resources/${c.resource ?? ''}/fields`;
  if (c.require) {
    const at = `${fields}/${c.require}`;
    return (s) => (s.rule === 'field-made-required' || s.rule === 'required-field-added') && under(s.pointer, at);
  }
  if (c.move) {
    const at = `${fields}/${c.move.from}`;
    return (s) => s.rule === 'field-removed' && under(s.pointer, at);
  }
  if (c.error) {
    const code = c.error.code;
    return (s) =>
      s.rule === 'status-changed' &&
      (under(s.pointer, `/errors/catalogue/${code}`) || under(s.pointer, `/errors/remap/${code}`));
  }
  if (c.transform && c.covers?.length && c.resource) {
    const rules = new Set(c.covers);
    const resource = c.resource;
    return (s) =>
      rules.has(s.rule) &&
      (s.subject?.resource === resource ||
        under(s.pointer, `/resources/${resource}`) ||
        under(s.pointer, `/endpoints/${resource}`));
  }
  return undefined;
};

export const coversOf = (versions: readonly Version[]): Cover[] =>
  versions.flatMap((v) =>
    (v.changes ?? []).flatMap((c) => {
      const covers = coverOf(c);
      return covers ? [{ version: v.id, covers }] : [];
    }),
  );

/**
 * What a new version removes while the spec keeps it for older versions (`remove-operation`, `remove-transition`,
 * `remove-event`): a break the two specs' shapes do not show, reported where the version declares it.
 */
export const declaredRemovals = (d: DiffCollector, spec: ServiceSpec, added: readonly Version[]): SpecChange[] => {
  const start = d.changes.length;
  const all = spec.versioning?.versions ?? [];
  for (const version of added) {
    const v = all.indexOf(version);
    for (const [i, c] of (version.changes ?? []).entries()) {
      const at = (kind: string) => ['versioning', 'versions', v, 'changes', i, kind];
      const op = c['remove-operation'];
      if (op)
        d.add(
          op.includes(' ') || !op.includes('.') ? 'endpoint-removed' : 'operation-removed',
          'new',
          at('remove-operation'),
          `${op} removed from version ${version.id} on`,
        );
      if (c['remove-transition'])
        d.add(
          'transition-removed',
          'new',
          at('remove-transition'),
          `${c.resource}: transition ${c['remove-transition']} removed from version ${version.id} on`,
        );
      if (c['remove-event'])
        d.add(
          'event-removed',
          'new',
          at('remove-event'),
          `event ${c['remove-event']} removed from version ${version.id} on`,
        );
    }
  }
  return d.changes.slice(start);
};
