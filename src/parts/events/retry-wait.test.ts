import { describe, expect, it } from 'vitest';
import { retryWaitMs } from './retry-wait.ts';

describe('retryWaitMs', () => {
  it('is the step with ±10% jitter', () => {
    expect(retryWaitMs(1000, undefined, 0)).toBe(900);
    expect(retryWaitMs(1000, undefined, 0.5)).toBe(1000);
    expect(retryWaitMs(1000, undefined, 0.999999)).toBeLessThan(1100);
    for (let i = 0; i < 1000; i++) {
      const wait = retryWaitMs(400, undefined);
      expect(wait).toBeGreaterThanOrEqual(360);
      expect(wait).toBeLessThan(440);
    }
  });

  it('waits longer when Retry-After asks for it, at most a day', () => {
    expect(retryWaitMs(100, 5000, 0.5)).toBe(5000);
    expect(retryWaitMs(5000, 100, 0.5)).toBe(5000);
    expect(retryWaitMs(100, 10 * 86_400_000, 0.5)).toBe(86_400_000);
  });
});
