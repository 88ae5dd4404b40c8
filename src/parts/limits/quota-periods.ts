import { MONTH_MS } from '../../spec/units.ts';

/** The calendar period (UTC) a quota counts in at `now`: start inclusive, end exclusive, ms since the epoch. */
export interface Period {
  readonly start: number;
  readonly end: number;
}

/**
 * A quota per month counts calendar months (from the 1st, 00:00 UTC); any other window counts whole windows from
 * 1970-01-01T00:00Z, which makes a day a calendar day in UTC and an hour a clock hour.
 */
export const periodOf = (windowMs: number, now: number): Period => {
  if (windowMs === MONTH_MS) {
    const d = new Date(now);
    return {
      start: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1),
      end: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1),
    };
  }
  const start = Math.floor(now / windowMs) * windowMs;
  return { start, end: start + windowMs };
};

/** The counter of one caller's quota in one period; the period is in the key, so a new period starts at 0. */
export const quotaKey = (operation: string, subject: string, period: Period): string =>
  `quota:${operation}:${period.start}:${subject}`;
