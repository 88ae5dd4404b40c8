/**
 * Answers that are ready in one turn of the event loop are written together at its end (setImmediate runs right
 * after the poll phase that read their requests), instead of one by one between the reads. Each answer is still one
 * write of its own, but a client on the same host (a load balancer, a sidecar proxy, a load generator) is woken once
 * for the batch rather than once per answer: on a 2-core VM the write that woke the client was about a third of a
 * GET's CPU, the wake-up alone 18 % (perf: sock_def_readable, bench/RESULTS.md). Netty's flush consolidation and uWebSockets' per-iteration cork do the same.
 * It costs one setImmediate a turn; an answer waits at most for the rest of its turn, or for LATER_MAX others.
 */
export interface AnswerTurn {
  /** Runs `write(a, b)` at the end of this turn, after the writes asked for before it. */
  later<A, B>(write: (a: A, b: B) => void, a: A, b: B): void;
}

/** Writes held at once past which the turn's writes go out at once: no answer waits on an unbounded batch. */
const LATER_MAX = 64;

export const createAnswerTurn = (failed: (error: unknown) => void): AnswerTurn => {
  // Three parallel lists rather than a closure or an object per answer.
  let writes: Array<(a: unknown, b: unknown) => void> = [];
  let firsts: unknown[] = [];
  let seconds: unknown[] = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    const due = writes;
    const as = firsts;
    const bs = seconds;
    writes = [];
    firsts = [];
    seconds = [];
    for (let i = 0; i < due.length; i++) {
      try {
        (due[i] as (a: unknown, b: unknown) => void)(as[i], bs[i]);
      } catch (error) {
        // One answer's failure is its own: the rest of the turn's answers are still written.
        failed(error);
      }
    }
  };
  return {
    later(write, a, b) {
      writes.push(write as (a: unknown, b: unknown) => void);
      firsts.push(a);
      seconds.push(b);
      if (writes.length >= LATER_MAX) flush();
      else if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
  };
};
