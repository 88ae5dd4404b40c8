import type { Store } from '../storage/index.ts';
import type { Drain } from './drain.ts';

export interface ShutdownOutcome {
  /** 0 when everything acknowledged is on disk; 1 when it may not be, or closing failed. */
  readonly code: number;
  /** What went wrong, one line for the log (no stack), when anything did. */
  readonly line?: string;
  /** The grace ran out: work still in hand (a webhook delivery, a slow request) was cut; the process should exit now. */
  readonly cut: boolean;
}

/** How long the workers get to record what was cut, once the grace has run out. */
const AFTER_CUT_MS = 1_000;

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * The graceful shutdown: readiness fails; new connections are still served until none has come for a second (the
 * balancers have stopped sending), then the listening socket closes; every request received is answered, and each
 * connection closes once it is quiet (drain.ts); open streams are ended; then the workers stop
 * (the webhook worker finishes the deliveries in flight) and the store closes. What is still running when the
 * grace is over is cut: a delivery cut is recorded as a failed attempt and retried (with the same webhook-id), and
 * no answer was sent for a request cut, so nothing acknowledged is lost.
 *
 * Exit 0 when everything acknowledged is on disk, even if the store could not tidy up (a WAL not checkpointed, applied
 * at the next start, on a full disk); 1 when it may not be (the database file was deleted or replaced while serving)
 * or closing failed. Never throws.
 */
export const shutDown = async (
  app: { close(): PromiseLike<unknown> },
  store: Store,
  drain: Drain,
): Promise<ShutdownOutcome> => {
  const problems: string[] = [];
  let failed = false;
  drain.begin();
  // The listening socket closes once clients have stopped connecting (balancers saw readiness fail), not at once.
  const closed = drain
    .connectionsStopped()
    .then(() => drain.acceptQueueTaken())
    .then(() => app.close())
    .then(
      () => 'closed' as const,
      (error: unknown) => {
        failed = true;
        problems.push(`closing the server: ${messageOf(error)}`);
        return 'closed' as const;
      },
    );
  const cut = (await Promise.race([closed, drain.graceOver.then(() => 'cut' as const)])) === 'cut';
  drain.end();
  if (cut) {
    const connections = drain.cut();
    problems.push(
      `the grace ran out: ${connections} connection(s) cut unanswered, deliveries in flight cut (they are retried)`,
    );
    // The workers record what they cut and release their leases, so that another instance takes over at once.
    let waited: NodeJS.Timeout | undefined;
    await Promise.race([closed, new Promise((done) => (waited = setTimeout(done, AFTER_CUT_MS)))]);
    clearTimeout(waited);
  }
  try {
    const report = await store.close();
    failed ||= !report.intact;
    if (report.note) problems.push(report.note);
  } catch (error) {
    failed = true;
    problems.push(`closing the database: ${messageOf(error)}`);
  }
  const code = failed ? 1 : 0;
  if (problems.length === 0) return { code, cut };
  return { code, cut, line: `${problems.join('; ')}${failed ? '' : '; everything acknowledged is on disk'}` };
};
