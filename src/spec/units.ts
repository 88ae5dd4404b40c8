/** The units a spec writes limits and delays in: `10s`, `5m`, `24h`, `7d`, ISO 8601 `PT24H`, `1mb`, `100/min`. */

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, min: 60_000, h: 3_600_000, d: 86_400_000 };
const ISO_DURATION = /^P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/;

/** Milliseconds, or undefined when the text is not a duration. */
export const parseDuration = (text: unknown): number | undefined => {
  if (typeof text !== 'string') return undefined;
  const short = /^(\d+(?:\.\d+)?)\s*(ms|s|m|min|h|d)$/.exec(text.trim());
  if (short) return Number(short[1]) * (DURATION_UNITS[short[2] ?? ''] ?? Number.NaN);
  const iso = ISO_DURATION.exec(text.trim());
  if (!iso || text.trim() === 'P' || text.trim().endsWith('T')) return undefined;
  const [, w, d, h, m, s] = iso.map((x) => Number(x ?? 0));
  return ((((w ?? 0) * 7 + (d ?? 0)) * 24 + (h ?? 0)) * 60 + (m ?? 0)) * 60_000 + (s ?? 0) * 1000;
};

/** A duration in the largest whole unit: 15 s, 2 min, 250 ms. */
export const formatDuration = (ms: number): string =>
  ms % 86_400_000 === 0
    ? `${ms / 86_400_000} d`
    : ms % 3_600_000 === 0
      ? `${ms / 3_600_000} h`
      : ms % 60_000 === 0
        ? `${ms / 60_000} min`
        : ms % 1000 === 0
          ? `${ms / 1000} s`
          : `${ms} ms`;

const SIZE_UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };

/** Bytes, or undefined when the text is not a size like 1mb, 512kb, 100b. */
export const parseSize = (text: unknown): number | undefined => {
  if (typeof text !== 'string') return undefined;
  const m = /^(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)$/i.exec(text.trim());
  return m ? Math.floor(Number(m[1]) * (SIZE_UNITS[(m[2] ?? '').toLowerCase()] ?? Number.NaN)) : undefined;
};

/** A month as a rate's window: 30 days. */
export const MONTH_MS = 30 * 86_400_000;

const RATE_WINDOWS: Record<string, number> = {
  s: 1000,
  sec: 1000,
  second: 1000,
  m: 60_000,
  min: 60_000,
  minute: 60_000,
  h: 3_600_000,
  hour: 3_600_000,
  d: 86_400_000,
  day: 86_400_000,
  // Nominal: a quota per month counts calendar months (UTC); a rate per month refills over 30 days.
  month: MONTH_MS,
};

export interface Rate {
  readonly limit: number;
  readonly windowMs: number;
}

/** `100/min` → { limit: 100, windowMs: 60000 }, or undefined. */
export const parseRate = (text: unknown): Rate | undefined => {
  if (typeof text !== 'string') return undefined;
  const m = /^(\d+)\s*\/\s*(\d*)\s*([a-z]+)$/.exec(text.trim());
  if (!m) return undefined;
  const unit = RATE_WINDOWS[m[3] ?? ''];
  const limit = Number(m[1]);
  if (!unit || limit < 1) return undefined;
  return { limit, windowMs: unit * Number(m[2] || 1) };
};
