import type { Plan, ResourcePlan } from '../../plan/types.ts';
import {
  code,
  codes,
  type DocBlock,
  type DocSection,
  heading,
  type Inline,
  list,
  notShownSection,
  paragraph,
} from '../docs-model.ts';
import { wireFields } from '../endpoints/wire-names.ts';
import { fieldTable } from './field-docs.ts';
import { viewBlocks } from './view-docs.ts';

export const RESOURCES_HEADING = 'Resources and their fields';
const NOT_SHOWN = 'Resources, their fields, types, formats and required flags: not shown.';

/** The engine-owned fields every record has, as leading rows of its field table. */
const systemRows = (resource: ResourcePlan): Inline[][] => {
  const wire = (name: string) => resource.wire.names.out.get(name)?.name ?? name;
  return [
    [
      code('id'),
      resource.idStyle === 'integer' ? 'integer' : 'string',
      '',
      'yes',
      '',
      'read-only; set by the service',
      resource.idStyle === 'integer'
        ? 'Numbered 1, 2, 3… in creation order.'
        : resource.idStyle === 'uuidv7'
          ? 'UUIDv7, sortable by creation time.'
          : resource.idPrefix
            ? ['Sortable id like ', code(`${resource.idPrefix}_01J…`)]
            : 'Sortable id.',
    ],
    ...(resource.object
      ? [
          [
            code('object'),
            'string',
            '',
            'yes',
            '',
            'read-only; always the same',
            ['Always ', code(`"${resource.object}"`), '.'],
          ],
        ]
      : []),
    [
      code(wire('createdAt')),
      'datetime',
      '',
      'yes',
      '',
      'read-only; set by the service',
      'When the record was created.',
    ],
    [
      code(wire('updatedAt')),
      'datetime',
      '',
      'yes',
      '',
      'read-only; set by the service',
      'When the record last changed.',
    ],
  ];
};

const resourceBlocks = (resource: ResourcePlan): DocBlock[] => {
  const blocks: DocBlock[] = [heading(3, resource.name)];
  if (resource.description) blocks.push(paragraph(resource.description));
  const fields = Object.fromEntries(
    resource.fields.map((f) => [
      f.name,
      f.isState
        ? { ...f.spec, readOnly: true, description: f.spec.description ?? 'State; set by transitions.' }
        : f.spec,
    ]),
  );
  const fieldsTable = fieldTable(wireFields(fields, resource.wire.names), systemRows(resource));
  if (fieldsTable) blocks.push(fieldsTable);
  blocks.push(...viewBlocks(resource));
  if (resource.indexes.length)
    blocks.push(
      paragraph('Indexes:'),
      list(
        resource.indexes.map((i) => [...codes(i.fields), i.unique ? ' (unique)' : '', i.name ? ` — ${i.name}` : '']),
      ),
    );
  return blocks;
};

/** Part 2: one field table per resource, system fields first. */
export const resourcesDocs = (plan: Plan): DocSection => {
  if (!plan.resources.length) return notShownSection('resources', RESOURCES_HEADING, NOT_SHOWN);
  return {
    part: 'resources',
    heading: RESOURCES_HEADING,
    shown: true,
    blocks: [
      paragraph(
        'Every record also carries a revision, sent as its ',
        code('ETag'),
        '; writes may send it back in ',
        code('If-Match'),
        ' to refuse lost updates.',
      ),
      ...plan.resources.flatMap(resourceBlocks),
    ],
  };
};
