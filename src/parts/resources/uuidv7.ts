import { randomBytes } from 'node:crypto';

let lastMs = -1;
let counter = 0;

/**
 * A UUIDv7 (RFC 9562) for `timeMs`, monotonic in this process: within one millisecond (or when the clock steps
 * back) the 12-bit `rand_a` field counts up from a random start (RFC 9562 §6.2, method 1), so ids sort in the order
 * they were minted, as ULIDs do.
 */
export const uuidv7 = (timeMs: number): string => {
  const bytes = randomBytes(16);
  if (timeMs > lastMs) {
    lastMs = timeMs;
    counter = ((bytes[6] as number) & 0x07) * 256 + (bytes[7] as number);
  } else if (++counter > 0xfff) {
    lastMs += 1;
    counter = 0;
  }
  const ms = lastMs;
  for (let i = 5; i >= 0; i--) bytes[5 - i] = Math.floor(ms / 2 ** (8 * i)) & 0xff;
  bytes[6] = 0x70 | (counter >> 8);
  bytes[7] = counter & 0xff;
  bytes[8] = 0x80 | ((bytes[8] as number) & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};
