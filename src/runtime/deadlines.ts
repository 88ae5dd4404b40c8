/** A request's time budget, as its handler sees it. */
export interface Deadline {
  /** The budget is spent: the request was answered 503 `timeout`; nothing it does from now on may commit. */
  readonly expired: boolean;
  /** Aborted when the budget is spent (made on first use: most handlers never look). */
  readonly signal: AbortSignal;
}

class RequestDeadline implements Deadline {
  expired = false;
  /** Its place in the open list; -1 once closed or expired. */
  slot = -1;
  #controller: AbortController | undefined;
  constructor(
    readonly due: number,
    /** Called with `owner` when the budget is spent: one function per route, not a closure per request. */
    readonly onExpire: (owner: never) => void,
    readonly owner: unknown,
  ) {}
  get signal(): AbortSignal {
    this.#controller ??= new AbortController();
    if (this.expired && !this.#controller.signal.aborted) this.#controller.abort();
    return this.#controller.signal;
  }
  expire() {
    this.expired = true;
    this.#controller?.abort();
    (this.onExpire as (owner: unknown) => void)(this.owner);
  }
}

/**
 * Request time budgets without a timer per request: open requests sit in a list that one interval sweeps (at a
 * tenth of the shortest budget any route has, between 10 ms and 1 s). An overdue request is answered at once through
 * `onExpire`; its handler is not interrupted, but its transaction sees `expired` before it commits and rolls back.
 * The list is an array each deadline knows its place in (a close moves the last one there): cheaper per request
 * than a Set's hashing, and nothing is allocated but the deadline.
 */
export const createDeadlines = (shortestBudgetMs: number) => {
  const open: RequestDeadline[] = [];
  const sweepMs = Math.min(1_000, Math.max(10, Math.floor(shortestBudgetMs / 10)));
  let timer: NodeJS.Timeout | undefined;
  const remove = (deadline: RequestDeadline) => {
    const at = deadline.slot;
    if (at < 0) return;
    const last = open.pop() as RequestDeadline;
    if (last !== deadline) {
      open[at] = last;
      last.slot = at;
    }
    deadline.slot = -1;
  };
  const sweep = () => {
    const now = performance.now();
    const overdue = open.filter((deadline) => deadline.due <= now);
    for (const deadline of overdue) remove(deadline);
    for (const deadline of overdue) deadline.expire();
    if (open.length === 0 && timer) {
      clearInterval(timer);
      timer = undefined;
    }
  };
  return {
    /**
     * Starts a request's budget of `budgetMs`; `elapsedMs` of it were spent before the handler started. Once it is
     * spent, `onExpire(owner)` answers the request.
     */
    open<T>(budgetMs: number, elapsedMs: number, onExpire: (owner: T) => void, owner: T): RequestDeadline {
      const deadline = new RequestDeadline(performance.now() + budgetMs - elapsedMs, onExpire, owner);
      deadline.slot = open.push(deadline) - 1;
      if (!timer) {
        timer = setInterval(sweep, sweepMs);
        timer.unref();
      }
      return deadline;
    },
    close(deadline: Deadline) {
      remove(deadline as RequestDeadline);
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      for (const deadline of open) deadline.slot = -1;
      open.length = 0;
    },
  };
};
