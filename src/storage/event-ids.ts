/**
 * Event ids are derived from the outbox position, so the outbox needs no second index: `evt_` + 26 Crockford
 * base32 characters, ULID-shaped: 10 for the event's time in ms, 16 for its seq. Sorting ids sorts by time,
 * then seq; looking one up is a primary-key read of the seq, checked against the time.
 */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const VALUE = new Map([...ALPHABET].map((c, i) => [c, i]));
const PATTERN = /^evt_[0-9A-HJKMNP-TV-Z]{26}$/;

const encode = (value: number, length: number): string => {
  let out = '';
  let rest = value;
  for (let i = 0; i < length; i++) {
    out = ALPHABET[rest % 32] + out;
    rest = Math.floor(rest / 32);
  }
  return out;
};

const decode = (text: string): number => {
  let value = 0;
  for (const c of text) value = value * 32 + (VALUE.get(c) as number);
  return value;
};

export const eventId = (seq: number, timeMs: number): string => `evt_${encode(timeMs, 10)}${encode(seq, 16)}`;

/** The seq and time an id names, or undefined for text that is no event id. */
export const parseEventId = (id: string): { seq: number; timeMs: number } | undefined => {
  if (!PATTERN.test(id)) return undefined;
  const seq = decode(id.slice(14));
  const timeMs = decode(id.slice(4, 14));
  return Number.isSafeInteger(seq) && Number.isSafeInteger(timeMs) ? { seq, timeMs } : undefined;
};
