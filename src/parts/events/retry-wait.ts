/** The longest a receiver's Retry-After is honoured: a day. */
const MAX_RETRY_AFTER_MS = 86_400_000;

/**
 * How long a failed delivery waits before its next attempt: the schedule's step with ±10% jitter (so that the
 * retries of many deliveries that failed together spread out), or longer when the receiver's Retry-After asks for it
 * (at most a day). `random` is in [0, 1).
 */
export const retryWaitMs = (step: number, retryAfterMs: number | undefined, random: number = Math.random()): number =>
  Math.max(step * (0.9 + random * 0.2), Math.min(retryAfterMs ?? 0, MAX_RETRY_AFTER_MS));
