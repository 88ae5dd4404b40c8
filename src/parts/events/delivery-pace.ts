import { performance } from 'node:perf_hooks';

/** How often the load is looked at. */
const WINDOW_MS = 100;
/** The event loop is this busy, and requests came in: the API has the process to itself but for a trickle. */
const BUSY_UTILIZATION = 0.85;
/**
 * Deliveries started per window while the API is saturated: about 20 a second, for all endpoints together.
 * Enough to show deliveries are alive; each costs the API about as much as several requests, and no trickle
 * would keep up with a saturating write load anyway (the backlog drains once the load drops).
 */
const BUSY_STARTS = 2;

/**
 * Webhook deliveries share the process with the API, and the API comes first: while requests keep the event
 * loop saturated, deliveries start at a trickle (they are durable in the outbox and catch up as soon as the
 * load drops); otherwise they go as fast as receivers answer. `requests()` counts the requests served so far.
 */
export const createDeliveryPace = (requests: () => number, onRefill: () => void) => {
  let lastUtilization = performance.eventLoopUtilization();
  let lastRequests = requests();
  let tokens = Number.POSITIVE_INFINITY;
  let busy = false;
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(now, lastUtilization);
    lastUtilization = now;
    const served = requests();
    busy = utilization > BUSY_UTILIZATION && served > lastRequests;
    lastRequests = served;
    const starved = tokens === 0;
    tokens = busy ? BUSY_STARTS : Number.POSITIVE_INFINITY;
    if (starved) onRefill();
  }, WINDOW_MS);
  timer.unref();
  return {
    /** Whether a delivery may start now. */
    take(): boolean {
      if (tokens === 0) return false;
      tokens--;
      return true;
    },
    get busy() {
      return busy;
    },
    stop() {
      clearInterval(timer);
    },
  };
};
