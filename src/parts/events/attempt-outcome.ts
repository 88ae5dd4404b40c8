import type { AttemptRecord, DeliveryAttempt, WebhookEndpoint } from '../../storage/index.ts';
import { retryWaitMs } from './retry-wait.ts';
import type { Answer } from './webhook-post.ts';

/** What an attempt leads to: the delivery's next state, and what it changes of its endpoint. */
export interface AttemptOutcome {
  readonly next: AttemptRecord['next'];
  /** Since when every attempt of the endpoint failed (undefined once one succeeds). */
  readonly failingSince: string | undefined;
  /** Why the endpoint is disabled by this attempt, if it is. */
  readonly disable: string | undefined;
}

export interface OutcomeRules {
  /** Waits before each retry (ms): its length is the number of retries. */
  readonly schedule: readonly number[];
  /** An endpoint whose every attempt failed for this long is disabled. */
  readonly disableAfterMs: number;
  readonly now: () => Date;
}

/**
 * Decides an attempt's outcome: 2xx delivers; 410 disables a live webhook endpoint; any other answer, a time-out or
 * a failed connection retries on the schedule, later if Retry-After asks for it (counted from the answer); out of
 * retries it fails. An attempt given up before it was sent (`answer` undefined) fails. A live endpoint whose every
 * attempt failed for `disableAfterMs` is disabled. `attempts` is how many came before this one; `startedMs` is when
 * it started (`log.at`).
 */
export const createOutcomeRule =
  (rules: OutcomeRules) =>
  (
    attempts: number,
    endpoint: WebhookEndpoint | undefined,
    log: DeliveryAttempt,
    startedMs: number,
    answer: Answer | undefined,
  ): AttemptOutcome => {
    // A webhook endpoint still live: one already disabled keeps the reason and time it was disabled with.
    const live = endpoint?.kind === 'webhook' && !endpoint.disabledAt;
    const ok = answer?.status !== undefined && answer.status >= 200 && answer.status < 300;
    if (ok) return { next: { state: 'delivered' }, failingSince: undefined, disable: undefined };
    const failingSince = endpoint?.failingSince ?? log.at;
    if (live && answer?.status !== 410 && startedMs - Date.parse(failingSince) >= rules.disableAfterMs) {
      const last = answer?.status ?? answer?.error ?? log.error;
      const disable = `every delivery failed since ${failingSince} (last: ${last})`;
      return { next: { state: 'failed' }, failingSince, disable };
    }
    if (!answer) return { next: { state: 'failed' }, failingSince, disable: undefined };
    if (answer.status === 410 && live)
      return { next: { state: 'failed' }, failingSince, disable: 'the receiver answered 410 Gone' };
    const delay = rules.schedule[attempts];
    if (delay === undefined) return { next: { state: 'failed' }, failingSince, disable: undefined };
    // Counted from the answer, not from the request: Retry-After is relative to when it was said.
    const wait = retryWaitMs(delay, answer.retryAfterMs);
    const at = new Date(Math.max(startedMs, rules.now().getTime()) + wait).toISOString();
    return { next: { state: 'pending', at }, failingSince, disable: undefined };
  };
