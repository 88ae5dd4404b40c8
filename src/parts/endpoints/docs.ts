import type { CustomEndpointPlan, Operation, Plan, ResourcePlan } from '../../plan/types.ts';
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
  type Span,
  table,
} from '../docs-model.ts';
import { fieldSummary, fieldTable } from '../resources/field-docs.ts';
import { customAccess, operationAccess, transitionAccess } from './access-docs.ts';
import { declaredParamItems, hasListOptions, relationRows } from './relation-docs.ts';
import { listAnswerShape, pagingSpans, recordWireSpans } from './wire-docs.ts';
import { isConventionalList } from './wire-plan.ts';

export const ENDPOINTS_HEADING = 'Endpoints';
const NOT_SHOWN = 'Methods, path shapes and request and response payload shapes: not shown.';
const COLUMNS = ['Method', 'Path', 'Operation', 'Request', 'Response', 'Access'];

/** Request and response of each CRUD operation (its method and path are the route's). */
const OPERATION_SHAPES: ReadonlyArray<{
  op: Operation;
  request: (r: string) => Inline;
  response: (r: string) => Inline;
}> = [
  { op: 'list', request: () => 'query options below', response: (r) => `a page of ${r}` },
  { op: 'create', request: (r) => `${r}, writable fields`, response: (r) => `201, ${r}` },
  { op: 'get', request: () => '', response: (r) => r },
  { op: 'update', request: (r) => `some writable fields of ${r}`, response: (r) => r },
  { op: 'replace', request: (r) => `${r}, writable fields`, response: (r) => r },
  { op: 'delete', request: () => '', response: () => '204, no body' },
];

const listOptions = (resource: ResourcePlan): Inline[] => {
  const l = resource.list;
  const wire = (name: string) => resource.wire.names.out.get(name)?.name ?? name;
  const sortDefault = l.defaultSort.map((k) => `${k.desc ? '-' : ''}${wire(k.field)}`).join(',');
  const items: Inline[] = [];
  if (l.filter.length) items.push(['Filter on: ', ...codes(l.filter.map(wire))]);
  items.push(...declaredParamItems(resource));
  items.push(['Sort by: ', ...codes(l.sort.map(wire)), '; default ', code(sortDefault)]);
  items.push(
    resource.wire.paging === 'cursor'
      ? `Page size: ${l.pageSize.default} by default, at most ${l.pageSize.max}; pages are cursors.`
      : [`Page size: ${l.pageSize.default} by default, at most ${l.pageSize.max}; `, ...pagingSpans(resource)],
  );
  if (l.expand.length) items.push(['Expand references: ', ...codes(l.expand.map(wire))]);
  if (!isConventionalList(resource)) items.push(['Answer: ', code(listAnswerShape(resource))]);
  return items;
};

const resourceBlocks = (plan: Plan, resource: ResourcePlan): DocBlock[] => {
  const base = plan.service.basePath;
  const rows: Inline[][] = resource.routes.flatMap((route) => {
    const s = OPERATION_SHAPES.find((shape) => shape.op === route.operation);
    if (!s) return [];
    return [
      [
        route.method,
        code(`${base}${route.path}`),
        route.self ? `${s.op} (the caller's own)` : s.op,
        s.request(resource.name),
        s.response(resource.name),
        operationAccess(plan, resource.name, s.op),
      ],
    ];
  });
  for (const t of resource.states?.transitions ?? [])
    rows.push([
      'POST',
      code(`${base}${resource.itemPath}/${t.path}`),
      ['transition ', code(t.name)],
      t.input ? fieldSummary(t.input) : 'no body',
      resource.name,
      transitionAccess(plan, resource.name, t.name),
    ]);
  rows.push(...relationRows(plan, resource));
  const wire = (name: string) => resource.wire.names.out.get(name)?.name ?? name;
  const writable = resource.fields.filter((f) => !f.readOnly).map((f) => wire(f.name));
  const readOnly = resource.fields.filter((f) => f.readOnly).map((f) => wire(f.name));
  const shape: Span[] = [`${resource.name} records are sent and returned as JSON objects of their fields. Writable: `];
  shape.push(
    ...(writable.length ? codes(writable) : ['none']),
    '. Read-only: ',
    ...codes([...['id', 'createdAt', 'updatedAt'].map(wire), ...readOnly]),
    '.',
  );
  shape.push(...recordWireSpans(resource));
  const blocks: DocBlock[] = [heading(3, resource.name), paragraph(...shape), table(COLUMNS, rows)];
  if (hasListOptions(resource)) blocks.push(paragraph('List query options:'), list(listOptions(resource)));
  return blocks;
};

const customBlocks = (plan: Plan, c: CustomEndpointPlan): DocBlock[] => {
  const blocks: DocBlock[] = [heading(4, code(`${c.method} ${plan.service.basePath}${c.path}`), ` — ${c.name}`)];
  if (c.summary) blocks.push(paragraph(c.summary));
  blocks.push(paragraph('Access: ', ...customAccess(plan, c.name), '.'));
  const parts: Array<[string, DocBlock | undefined]> = [
    ['Path parameters:', fieldTable(c.params)],
    ['Query parameters:', fieldTable(c.query)],
    ['Request body:', fieldTable(c.body)],
  ];
  for (const [label, block] of parts) if (block) blocks.push(paragraph(label), block);
  const response = c.response;
  if (response) {
    const fields = fieldTable(response.fields);
    const shape: Span[] = response.list
      ? [', ', code('{ "data": [ … ] }'), ' with one object of these fields per item:']
      : [fields ? ', a JSON object of these fields:' : ', no body described.'];
    blocks.push(paragraph(`Response: ${response.status}`, ...shape));
    if (fields) blocks.push(fields);
  } else blocks.push(paragraph('Response: 200, no body described.'));
  if (c.errors.length) blocks.push(paragraph('May fail with: ', ...codes(c.errors), '.'));
  return blocks;
};

/** Part 4: each resource's operations and transition endpoints, then custom endpoints with their shapes. */
export const endpointsDocs = (plan: Plan): DocSection => {
  if (!plan.resources.length && !plan.custom.length) return notShownSection('endpoints', ENDPOINTS_HEADING, NOT_SHOWN);
  const blocks: DocBlock[] = [
    paragraph(
      'Request and response bodies are JSON. Unsafe requests (POST, PUT, PATCH, DELETE) may send an ',
      code('Idempotency-Key'),
      ' header: the first response is stored and replayed for a retry with the same key.',
    ),
    ...plan.resources.flatMap((r) => resourceBlocks(plan, r)),
  ];
  if (plan.custom.length)
    blocks.push(heading(3, 'Custom endpoints'), ...plan.custom.flatMap((c) => customBlocks(plan, c)));
  return { part: 'endpoints', heading: ENDPOINTS_HEADING, shown: true, blocks };
};
