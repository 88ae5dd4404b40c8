import { describe, expect, it } from 'vitest';
import { MONTH_MS } from '../../spec/units.ts';
import { periodOf } from './quota-periods.ts';

const at = (iso: string) => new Date(iso).getTime();
const shown = (p: { start: number; end: number }) => [new Date(p.start).toISOString(), new Date(p.end).toISOString()];

describe('quota periods (UTC)', () => {
  it('a day runs from midnight to midnight UTC', () => {
    expect(shown(periodOf(86_400_000, at('2026-03-02T23:59:59.999Z')))).toEqual([
      '2026-03-02T00:00:00.000Z',
      '2026-03-03T00:00:00.000Z',
    ]);
  });

  it('a month is a calendar month, February and December included', () => {
    expect(shown(periodOf(MONTH_MS, at('2028-02-29T12:00:00Z')))).toEqual([
      '2028-02-01T00:00:00.000Z',
      '2028-03-01T00:00:00.000Z',
    ]);
    expect(shown(periodOf(MONTH_MS, at('2026-12-31T23:00:00Z')))).toEqual([
      '2026-12-01T00:00:00.000Z',
      '2027-01-01T00:00:00.000Z',
    ]);
  });

  it('an hour is a clock hour', () => {
    expect(shown(periodOf(3_600_000, at('2026-03-02T10:30:00Z')))).toEqual([
      '2026-03-02T10:00:00.000Z',
      '2026-03-02T11:00:00.000Z',
    ]);
  });
});
