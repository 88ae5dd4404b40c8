import type { Plan, ResourcePlan } from '../../plan/types.ts';
import { formatDuration } from '../../spec/units.ts';
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
  table,
} from '../docs-model.ts';
import { fieldTable } from '../resources/field-docs.ts';

export const EVENTS_HEADING = 'Events';
const NOT_SHOWN = 'Events, notifications and callbacks: not shown.';

/** The resources whose changes emit events by themselves (`auto: true`, or the listed ones). */
const autoResources = (plan: Plan): ResourcePlan[] =>
  plan.resources.filter((r) => plan.events.autoResources.has(r.name));

/** Automatic events: created/updated/deleted, then one per distinct transition event. */
export const automaticEvents = (resource: ResourcePlan): Array<[string, Inline]> => {
  const rows: Array<[string, Inline]> = [
    [`${resource.name}.created`, `${resource.name} record created`],
    [`${resource.name}.updated`, `${resource.name} record changed`],
    [`${resource.name}.deleted`, `${resource.name} record deleted`],
  ];
  const byEvent = new Map<string, string[]>();
  for (const t of resource.states?.transitions ?? []) byEvent.set(t.event, [...(byEvent.get(t.event) ?? []), t.name]);
  for (const [event, transitions] of byEvent)
    rows.push([event, [transitions.length > 1 ? 'transitions ' : 'transition ', ...codes(transitions, ' or ')]]);
  return rows;
};

/** How webhooks (and callbacks) are delivered: what the delivery worker does, with the defaults it uses. */
const webhookBlocks = (plan: Plan): DocBlock[] => {
  const { webhooks, delivery: d } = plan.events;
  if (!webhooks && plan.events.callbacks.size === 0) return [];
  const items: Inline[] = [
    ['Signed as Standard Webhooks: ', ...codes(['webhook-id', 'webhook-timestamp', 'webhook-signature']), ' headers.'],
    [
      'Retries after: ',
      ...codes(d.retry),
      ' (each ±10 %, later when the receiver asks with ',
      code('Retry-After'),
      ').',
    ],
    ['Receiver time-out: ', code(formatDuration(d.timeoutMs)), '; redirects are not followed.'],
    [
      'An endpoint whose deliveries all fail for ',
      code(d.disableAfter),
      ' is disabled, and at once on ',
      code('410'),
      '.',
    ],
  ];
  if (webhooks)
    items.push(webhooks.events ? ['Events offered: ', ...codes(webhooks.events), '.'] : 'Every event is offered.');
  return [
    heading(3, 'Webhooks'),
    paragraph(
      webhooks
        ? 'Registered receivers get each event they subscribe to as a POST.'
        : 'Webhook endpoints are turned off; callbacks are delivered this way.',
    ),
    list(items),
  ];
};

/** Part 6: automatic and declared events, webhooks, callbacks and the stream. */
export const eventsDocs = (plan: Plan): DocSection => {
  const events = plan.events;
  if (events.types.length === 0) return notShownSection('events', EVENTS_HEADING, NOT_SHOWN);
  const blocks: DocBlock[] = [];
  const auto = autoResources(plan).flatMap(automaticEvents);
  if (auto.length)
    blocks.push(
      heading(3, 'Automatic events'),
      paragraph('Each is written in the same transaction as the change it reports.'),
      table(
        ['Event', 'Emitted when'],
        auto.map(([name, when]) => [code(name), when]),
      ),
    );
  const declared = [...events.declared];
  if (declared.length) {
    blocks.push(heading(3, 'Declared events'));
    for (const [name, e] of declared) {
      blocks.push(heading(4, code(name)));
      if (e.description) blocks.push(paragraph(e.description));
      blocks.push(fieldTable(e.payload) ?? paragraph('No payload.'));
    }
  }
  blocks.push(...webhookBlocks(plan));
  const callbacks = [...events.callbacks];
  if (callbacks.length)
    blocks.push(
      heading(3, 'Callbacks'),
      paragraph('A record may name a URL that is sent the listed events about that record.'),
      table(
        ['Resource', 'URL field', 'Events'],
        callbacks.map(([r, c]) => [r, code(c.field), codes(c.events)]),
      ),
    );
  const { stream } = events;
  blocks.push(
    heading(3, 'Event log and stream'),
    paragraph(
      'Every event is kept in the event log, ',
      code(`GET ${plan.service.basePath}/events`),
      ', and sent on a stream of server-sent events at ',
      code(`GET ${plan.service.basePath}${stream.path}`),
      '; each caller sees only events about records it may read. A client resumes the stream with ',
      code('Last-Event-ID'),
      `; a heartbeat every ${formatDuration(stream.heartbeatMs)}; credentials checked again every `,
      `${formatDuration(stream.recheckMs)}; at most ${stream.maxPerCaller} `,
      `streams open per caller and ${stream.maxOpen} in all (`,
      code('429 too_many_streams'),
      ' beyond).',
    ),
  );
  if (!blocks.length) return notShownSection('events', EVENTS_HEADING, NOT_SHOWN);
  return { part: 'events', heading: EVENTS_HEADING, shown: true, blocks };
};
