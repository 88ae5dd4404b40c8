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
  table,
} from '../docs-model.ts';
import { fieldTable } from '../resources/field-docs.ts';
import { autoEventsCover } from './event-names.ts';
import { STREAM_DEFAULTS } from './stream-settings.ts';

export const EVENTS_HEADING = 'Events';
const NOT_SHOWN = 'Events, notifications and callbacks: not shown.';

/** The resources whose changes emit events by themselves (`auto: true`, or the listed ones). */
const autoResources = (plan: Plan): ResourcePlan[] => {
  const covers = autoEventsCover(plan.spec);
  return plan.resources.filter((r) => covers(r.name));
};

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

const webhookBlocks = (plan: Plan): DocBlock[] => {
  const w = plan.spec.events?.webhooks;
  if (!w || w.enabled === false) return [];
  const items: Inline[] = [];
  items.push(
    w.signing === 'standard-webhooks'
      ? [
          'Signed as Standard Webhooks: ',
          ...codes(['webhook-id', 'webhook-timestamp', 'webhook-signature']),
          ' headers.',
        ]
      : 'Signing: not stated.',
  );
  if (w.retry?.length) items.push(['Retries after: ', ...codes(w.retry), '.']);
  if (w.timeout) items.push(['Receiver time-out: ', code(w.timeout), '.']);
  if (w.disableAfter) items.push(['An endpoint failing for ', code(w.disableAfter), ' is disabled.']);
  items.push(w.events ? ['Events offered: ', ...codes(w.events), '.'] : 'Every event is offered.');
  return [heading(3, 'Webhooks'), paragraph('Registered receivers get each event as a POST.'), list(items)];
};

/** Part 6: automatic and declared events, webhooks, callbacks and the stream. */
export const eventsDocs = (plan: Plan): DocSection => {
  const events = plan.spec.events;
  if (!events) return notShownSection('events', EVENTS_HEADING, NOT_SHOWN);
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
  const declared = Object.entries(events.declared ?? {});
  if (declared.length) {
    blocks.push(heading(3, 'Declared events'));
    for (const [name, e] of declared) {
      blocks.push(heading(4, code(name)));
      if (e.description) blocks.push(paragraph(e.description));
      blocks.push(fieldTable(e.payload) ?? paragraph('No payload.'));
    }
  }
  blocks.push(...webhookBlocks(plan));
  const callbacks = Object.entries(events.callbacks ?? {});
  if (callbacks.length)
    blocks.push(
      heading(3, 'Callbacks'),
      paragraph('A record may name a URL that is sent the listed events about that record.'),
      table(
        ['Resource', 'URL field', 'Events'],
        callbacks.map(([r, c]) => [r, code(c.field), codes(c.events)]),
      ),
    );
  if (events.stream)
    blocks.push(
      heading(3, 'Stream'),
      paragraph(
        'Server-sent events at ',
        code(`GET ${plan.service.basePath}${events.stream.path ?? STREAM_DEFAULTS.path}`),
        '; a client resumes with ',
        code('Last-Event-ID'),
        `; a heartbeat every ${events.stream.heartbeat ?? STREAM_DEFAULTS.heartbeat}; credentials checked again every `,
        `${events.stream.recheck ?? STREAM_DEFAULTS.recheck}; at most ${events.stream.maxPerCaller ?? STREAM_DEFAULTS.maxPerCaller} `,
        `streams open per caller and ${events.stream.maxOpen ?? STREAM_DEFAULTS.maxOpen} in all (`,
        code('429 too_many_streams'),
        ' beyond).',
      ),
    );
  if (!blocks.length) return notShownSection('events', EVENTS_HEADING, NOT_SHOWN);
  return { part: 'events', heading: EVENTS_HEADING, shown: true, blocks };
};
