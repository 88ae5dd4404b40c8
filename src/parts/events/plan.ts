import type { Static } from '@sinclair/typebox';
import type { ServiceSpec } from '../../spec/schema.ts';
import { parseDuration } from '../../spec/units.ts';
import type { FieldSpec } from '../resources/field-schema.ts';
import { autoEventsCover, knownEventNames } from './event-names.ts';
import type { DeclaredEventSchema } from './schema.ts';
import { type StreamSettings, streamSettings } from './stream-settings.ts';

/**
 * How events are delivered to webhook endpoints and callbacks alike: the spec's `events.webhooks` values with every
 * default filled in, here and nowhere else.
 */
export interface DeliveryPlan {
  readonly signing: 'standard-webhooks';
  /** Delays between attempts, as written (for the docs) and in ms (for the worker). */
  readonly retry: readonly string[];
  readonly retryMs: readonly number[];
  readonly timeout: string;
  readonly timeoutMs: number;
  readonly disableAfter: string;
  readonly disableAfterMs: number;
  /** Targets may be loopback or private addresses (development and tests only). */
  readonly allowPrivateTargets: boolean;
}

export interface DeclaredEventPlan {
  readonly description?: string;
  readonly payload: Readonly<Record<string, FieldSpec>>;
  /** Who sees it; undefined: every caller of the events endpoints. */
  readonly roles?: readonly string[];
}

/** Part 6 as served. Without any event type nothing of it is served (`types` is empty). */
export interface EventsPlan {
  /** Every event type the service can emit: automatic ones, then declared ones. */
  readonly types: readonly string[];
  /** Resources whose changes and transitions are events (`events.auto`). */
  readonly autoResources: ReadonlySet<string>;
  readonly declared: ReadonlyMap<string, DeclaredEventPlan>;
  readonly delivery: DeliveryPlan;
  /** The webhook endpoints API; undefined when the spec turns it off (`webhooks.enabled: false`). */
  readonly webhooks?: {
    /** Events offered to endpoints; undefined: every event. */ readonly events?: readonly string[];
  };
  /** Resource → the field holding its records' callback URL, and the events sent there. */
  readonly callbacks: ReadonlyMap<string, { readonly field: string; readonly events: readonly string[] }>;
  readonly stream: StreamSettings;
}

export const WEBHOOK_DEFAULTS = {
  retry: ['5s', '5m', '30m', '2h', '5h', '10h', '10h', '24h'],
  timeout: '15s',
  disableAfter: '5d',
} as const;
/** A receiver gets at most this long, whatever the spec says. */
export const MAX_WEBHOOK_TIMEOUT_MS = 30_000;

const ms = (text: string, fallback: string) => parseDuration(text) ?? (parseDuration(fallback) as number);

export const planEvents = (spec: ServiceSpec): EventsPlan => {
  const events = spec.events;
  const covers = autoEventsCover(spec);
  const w = events?.webhooks;
  const retry = w?.retry ?? [...WEBHOOK_DEFAULTS.retry];
  const timeout = w?.timeout ?? WEBHOOK_DEFAULTS.timeout;
  const disableAfter = w?.disableAfter ?? WEBHOOK_DEFAULTS.disableAfter;
  return {
    types: knownEventNames(spec),
    autoResources: new Set(Object.keys(spec.resources ?? {}).filter(covers)),
    declared: new Map(
      Object.entries(events?.declared ?? {}).map(([type, e]: [string, Static<typeof DeclaredEventSchema>]) => [
        type,
        {
          ...(e.description ? { description: e.description } : {}),
          payload: e.payload ?? {},
          ...(e.roles ? { roles: e.roles } : {}),
        },
      ]),
    ),
    delivery: {
      signing: 'standard-webhooks',
      retry,
      retryMs: retry.map((d) => parseDuration(d) ?? 60_000),
      timeout,
      timeoutMs: Math.min(ms(timeout, WEBHOOK_DEFAULTS.timeout), MAX_WEBHOOK_TIMEOUT_MS),
      disableAfter,
      disableAfterMs: ms(disableAfter, WEBHOOK_DEFAULTS.disableAfter),
      allowPrivateTargets: w?.allowPrivateTargets === true,
    },
    ...(w?.enabled === false ? {} : { webhooks: w?.events ? { events: w.events } : {} }),
    callbacks: new Map(
      Object.entries(events?.callbacks ?? {}).map(([r, c]) => [r, { field: c.field, events: c.events }]),
    ),
    stream: streamSettings(events?.stream),
  };
};
