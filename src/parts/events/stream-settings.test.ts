import { describe, expect, it } from 'vitest';
import { streamSettings } from './stream-settings.ts';

describe('streamSettings', () => {
  it('fills in the defaults', () => {
    expect(streamSettings(undefined)).toEqual({
      path: '/events/stream',
      heartbeatMs: 15_000,
      recheckMs: 60_000,
      maxPerCaller: 5,
      maxOpen: 1000,
    });
  });

  it('keeps what the spec says', () => {
    const given = { path: '/feed', heartbeat: '200ms', recheck: 'PT2M', maxPerCaller: 2, maxOpen: 9 };
    expect(streamSettings(given)).toEqual({
      path: '/feed',
      heartbeatMs: 200,
      recheckMs: 120_000,
      maxPerCaller: 2,
      maxOpen: 9,
    });
  });

  it('holds intervals between 100 ms and a day (0 would spin; past 2^31 ms Node fires every millisecond)', () => {
    const held = streamSettings({ heartbeat: '0s', recheck: '30d' });
    expect([held.heartbeatMs, held.recheckMs]).toEqual([100, 86_400_000]);
  });
});
