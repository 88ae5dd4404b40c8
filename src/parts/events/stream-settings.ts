import type { ServiceSpec } from '../../spec/schema.ts';
import { parseDuration } from '../../spec/units.ts';

type StreamSpec = NonNullable<NonNullable<ServiceSpec['events']>['stream']>;

/** What a spec that leaves `events.stream` settings out gets (the docs page says the same). */
export const STREAM_DEFAULTS = {
  path: '/events/stream',
  heartbeat: '15s',
  recheck: '60s',
  maxPerCaller: 5,
  maxOpen: 1000,
} as const;

/**
 * Bounds of the heartbeat and recheck intervals. Below 100 ms a stream would spend itself on timers; above a
 * day is no use, and past 2^31 - 1 ms Node fires an interval every millisecond instead.
 */
export const STREAM_INTERVAL_MS = { min: 100, max: 86_400_000 } as const;

export interface StreamSettings {
  readonly path: string;
  readonly heartbeatMs: number;
  readonly recheckMs: number;
  readonly maxPerCaller: number;
  readonly maxOpen: number;
}

const intervalMs = (text: string | undefined, fallback: string): number => {
  const ms = parseDuration(text ?? fallback) ?? (parseDuration(fallback) as number);
  return Math.min(Math.max(ms, STREAM_INTERVAL_MS.min), STREAM_INTERVAL_MS.max);
};

/** The stream's settings with defaults filled in and intervals held within their bounds. */
export const streamSettings = (stream: StreamSpec | undefined): StreamSettings => ({
  path: stream?.path ?? STREAM_DEFAULTS.path,
  heartbeatMs: intervalMs(stream?.heartbeat, STREAM_DEFAULTS.heartbeat),
  recheckMs: intervalMs(stream?.recheck, STREAM_DEFAULTS.recheck),
  maxPerCaller: stream?.maxPerCaller ?? STREAM_DEFAULTS.maxPerCaller,
  maxOpen: stream?.maxOpen ?? STREAM_DEFAULTS.maxOpen,
});
