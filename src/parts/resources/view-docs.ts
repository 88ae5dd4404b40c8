import type { ComputedFieldPlan, ResourcePlan } from '../../plan/types.ts';
import { code, codes, type DocBlock, type Inline, list, paragraph } from '../docs-model.ts';

const computedItem = (c: ComputedFieldPlan): Inline => [
  code(c.name),
  ` (${c.type}): `,
  code(c.cel),
  ...(c.description ? [` — ${c.description}`] : []),
];

/** A resource's computed fields and views, after its field table. */
export const viewBlocks = (resource: ResourcePlan): DocBlock[] => {
  const blocks: DocBlock[] = [];
  if (resource.computed.length)
    blocks.push(
      paragraph(
        'Computed fields (read-only, per caller, not stored, not in events; ',
        code('caller'),
        ' is the caller):',
      ),
      list(resource.computed.map(computedItem)),
    );
  if (resource.views.size) {
    const answers = (view: string) =>
      Object.entries(resource.answerViews)
        .filter(([, v]) => v === view)
        .map(([op]) => op);
    blocks.push(
      paragraph('Views:'),
      list(
        [...resource.views.values()].map((v): Inline => {
          const ops = answers(v.name);
          return [
            code(v.name),
            ': ',
            ...codes([...v.fields, ...v.computed.map((c) => c.name)]),
            ...(ops.length ? [`; answers ${ops.join(', ')}`] : []),
            ...(v.description ? [` — ${v.description}`] : []),
          ];
        }),
      ),
    );
    const own = [...resource.views.values()].flatMap((v) =>
      v.computed.filter((c) => !resource.computed.includes(c)).map((c) => [v.name, c] as const),
    );
    if (own.length)
      blocks.push(
        paragraph('Computed fields of views:'),
        list(own.map(([view, c]): Inline => [`${view}.`, ...[computedItem(c)].flat()])),
      );
  }
  const shownAs = resource.fields.filter((f) => f.ref?.view);
  if (shownAs.length)
    blocks.push(
      paragraph(
        'Expanded references: ',
        ...shownAs.flatMap((f, i) => [i ? ', ' : '', code(f.name), ` as ${f.ref?.to}.${f.ref?.view}`]),
      ),
    );
  return blocks;
};
