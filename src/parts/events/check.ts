import { type CheckContext, isRecord, recordEntries } from '../../spec/check-context.ts';
import type { PathSegment } from '../../spec/source-map.ts';
import { parseDuration } from '../../spec/units.ts';
import { suggestion } from '../../spec/validate-shape.ts';
import { asRecord, fieldMap, type Raw, resourceMap } from '../resources/lookup.ts';
import { knownEventNames } from './event-names.ts';

/** Semantic checks of part: events. */
export const checkEvents = (ctx: CheckContext): void => {
  const events = asRecord(ctx.spec.events);
  const resources = resourceMap(ctx.spec);
  const resourceNames = [...resources.keys()];
  if (Array.isArray(events.auto))
    for (const [i, name] of events.auto.entries())
      if (typeof name === 'string' && !resources.has(name))
        ctx.report(
          'unknown-resource',
          ['events', 'auto', i],
          `no resource "${name}"${suggestion(name, resourceNames)}`,
        );

  const known = knownEventNames(ctx.spec);
  const checkEventList = (list: unknown, path: PathSegment[]) => {
    if (!Array.isArray(list)) return;
    for (const [i, name] of list.entries())
      if (typeof name === 'string' && !known.includes(name))
        ctx.report('unknown-event', [...path, i], `no event "${name}"${suggestion(name, known)}`);
  };

  const webhooks = asRecord(events.webhooks);
  checkEventList(webhooks.events, ['events', 'webhooks', 'events']);
  if (Array.isArray(webhooks.retry))
    for (const [i, delay] of webhooks.retry.entries()) checkDuration(ctx, delay, ['events', 'webhooks', 'retry', i]);
  for (const key of ['timeout', 'disableAfter']) checkDuration(ctx, webhooks[key], ['events', 'webhooks', key]);
  if (isRecord(events.stream)) {
    checkDuration(ctx, events.stream.heartbeat, ['events', 'stream', 'heartbeat']);
    checkDuration(ctx, events.stream.recheck, ['events', 'stream', 'recheck']);
  }

  for (const [resource, callback] of recordEntries<Raw>(events.callbacks)) {
    const path: PathSegment[] = ['events', 'callbacks', resource];
    checkEventList(callback.events, [...path, 'events']);
    const spec = resources.get(resource);
    if (!spec) {
      const hint = suggestion(resource, resourceNames);
      ctx.report('unknown-callback-field', path, `no resource "${resource}"${hint}`, 'key');
      continue;
    }
    if (typeof callback.field !== 'string') continue;
    const field = fieldMap(spec).get(callback.field);
    if (field?.type !== 'string' || field.format !== 'uri')
      ctx.report(
        'unknown-callback-field',
        [...path, 'field'],
        field
          ? `"${callback.field}" must be a string with format uri to hold a callback URL`
          : `${resource} has no field "${callback.field}"${suggestion(callback.field, [...fieldMap(spec).keys()])}`,
      );
  }
};

const checkDuration = (ctx: CheckContext, value: unknown, path: PathSegment[]) => {
  if (typeof value === 'string' && parseDuration(value) === undefined)
    ctx.report('invalid-duration', path, `"${value}" is not a duration like 5s, 30m, 24h or PT24H`);
};
