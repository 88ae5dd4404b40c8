/** The background sequencer starts at most one run per this many ms (a stream on another instance waits up to it). */
export const PACE_MS = 20;

/** When the event sequencer (system-tables.ts) runs in this process: see createEventSequencer. */
export interface EventSequencer {
  /** A writer's events have committed: they are numbered by a run that starts after now, paced. */
  committed(): void;
  /** Resolves once a run that started after this call has ended: every event committed before it is numbered. */
  numbered(): Promise<void>;
}

interface Waiter {
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/**
 * One run at a time per process, each run shared by everyone who asked for one before it started. A committed writer
 * does not wait (a run is its own transaction and WAL flush, serialised on a lock): runs for writers start at most one
 * per PACE_MS, so under load one run numbers the events of many requests (a run costs PostgreSQL far more than an
 * event it numbers, bench/RESULTS.md), and a lone write is numbered at once. A reader needs the events committed
 * before its read numbered: it waits for the next run, started at once, which also takes the writers' events owed so
 * far (the webhook worker and the streams of this process share it instead of starting one each).
 *
 * Every run NOTIFYs the readers of every instance when it numbered something; a reader on another instance runs the
 * sequencer itself before it reads, so it misses no committed event even if this process dies before its run.
 */
export const createEventSequencer = (run: () => Promise<unknown>, detached: <T>(fn: () => T) => T): EventSequencer => {
  let running = false;
  /** A run is owed once the one under way ends (something committed, or a reader asked, after it started). */
  let owed = false;
  /** The owed run is for a reader: it does not wait for the pace. */
  let urgent = false;
  let waiters: Waiter[] = [];
  let timer: NodeJS.Timeout | undefined;
  let lastStart = Number.NEGATIVE_INFINITY;

  const start = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    running = true;
    owed = false;
    urgent = false;
    const told = waiters;
    waiters = [];
    lastStart = performance.now();
    // In no caller's transaction: a run is its own, and commits before its readers read.
    detached(run).then(
      () => finish(told, undefined),
      (error: unknown) => finish(told, { error }),
    );
  };
  const finish = (told: readonly Waiter[], failure: { error: unknown } | undefined) => {
    running = false;
    for (const w of told) {
      if (failure) w.reject(failure.error);
      else w.resolve();
    }
    if (owed) schedule();
  };
  const schedule = () => {
    if (running) return;
    if (urgent) return start();
    if (timer) return;
    const wait = lastStart + PACE_MS - performance.now();
    if (wait <= 0) return start();
    timer = detached(() => setTimeout(start, wait));
    timer.unref();
  };
  return {
    committed() {
      owed = true;
      schedule();
    },
    numbered() {
      return new Promise<void>((resolve, reject) => {
        waiters.push({ resolve, reject });
        owed = true;
        urgent = true;
        schedule();
      });
    },
  };
};
