import { onTestFailed, onTestFinished } from 'vitest';

// Waits in tests have no deadline of their own: a wall-clock limit fails on a loaded machine while the code is
// right, so only the test's timeout bounds a wait. When that strikes, the test's output says what was awaited.

type What = string | (() => string);

/** Reports `what` if the test fails while the wait is on; returns the wait's end, and whether the test is over. */
const reportWhileWaiting = (what: What) => {
  const state = { waiting: true, testOver: false };
  try {
    onTestFinished(() => {
      state.testOver = true;
    });
    onTestFailed(() => {
      if (state.waiting) console.error(`still waiting for ${typeof what === 'string' ? what : what()}`);
    });
  } catch {
    // Called from a hook, not a test: nothing to report to.
  }
  return state;
};

/** Polls `check` until it holds (`what` describes it, or the last state seen, for the report). */
export const waitFor = async (check: () => boolean | Promise<boolean>, what: What, everyMs = 20): Promise<void> => {
  const state = reportWhileWaiting(what);
  try {
    while (!state.testOver) {
      if (await check()) return;
      await new Promise((r) => setTimeout(r, everyMs));
    }
    throw new Error('the test ended during the wait'); // stops the abandoned test here
  } finally {
    state.waiting = false;
  }
};

/** Awaits `promise`, an event the test needs (`what` describes it, for the report). */
export const awaiting = async <T>(promise: Promise<T>, what: What): Promise<T> => {
  const state = reportWhileWaiting(what);
  try {
    return await promise;
  } finally {
    state.waiting = false;
  }
};
