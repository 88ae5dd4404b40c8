import { StoreError } from '../storage/index.ts';

/** What a piece of background work tells the server about itself: each run that went well, or what failed. */
export interface WorkerHealth {
  ok(): void;
  /** `doing` says what was being done, for the log line ("claiming due timers"). */
  failed(error: unknown, doing: string): void;
}

export interface RunningWorker {
  /** Stops taking new work and waits for what is in hand. */
  stop(): Promise<void>;
  /** The grace of a shutdown ran out: cuts the work in hand, so that a pending `stop` ends at once. */
  cut?(): void;
}

export interface WorkerReport {
  readonly state: 'running' | 'failing' | 'stopped';
  /** When the current state began. */
  readonly since: string;
  /** The last failure while failing: what was being done, and the error's code or class (never a stack or SQL). */
  readonly lastError?: string;
  readonly failures?: number;
}

interface Log {
  error(object: Record<string, unknown>, message: string): void;
  info(object: Record<string, unknown>, message: string): void;
}

/**
 * What a failure's log line carries: a storage fault (a full disk, a lost file) is an expected, classified failure,
 * logged by its kind and code like a request's (errors.ts); anything else with the error itself, stack and all.
 */
const logged = (error: unknown): Record<string, unknown> => {
  if (!(error instanceof StoreError)) return { err: error };
  const cause = error.cause as { code?: unknown } | undefined;
  return { storage: error.kind, ...(typeof cause?.code === 'string' ? { code: cause.code } : {}) };
};

/** Failures of a worker that keeps failing are logged at most this often (the first one at once). */
const REPEAT_LOG_MS = 60_000;

/** Of an error, what may be shown in /readyz: its code or its class, never its message (which may hold SQL). */
const summary = (error: unknown): string => {
  const e = error as { code?: unknown; kind?: unknown; name?: unknown } | undefined;
  if (typeof e?.code === 'string') return e.code;
  if (typeof e?.kind === 'string') return `${String(e.name ?? 'Error')}(${e.kind})`;
  return typeof e?.name === 'string' ? e.name : 'Error';
};

/**
 * The health of every piece of background work (the webhook worker, the timer worker, the stream's outbox watcher):
 * a failure is logged (with the error, at once, then at most once a minute while it goes on) and shown in /readyz,
 * and the recovery is logged too. Nothing in the background fails silently.
 */
interface Entry {
  state: WorkerReport['state'];
  since: number;
  lastError?: string;
  failures: number;
  /** When a failure was last logged. */
  loggedAt: number;
}

export const createWorkerRegistry = (log: Log, now: () => number = Date.now) => {
  const reports = new Map<string, Entry>();
  const healthOf = (name: string): WorkerHealth => {
    const entry: Entry = { state: 'running', since: now(), failures: 0, loggedAt: 0 };
    reports.set(name, entry);
    return {
      ok() {
        if (entry.state !== 'failing') return;
        log.info({ worker: name, failures: entry.failures }, `${name}: working again`);
        entry.state = 'running';
        entry.since = now();
        entry.failures = 0;
        delete entry.lastError;
      },
      failed(error, doing) {
        const t = now();
        if (entry.state !== 'failing') {
          entry.state = 'failing';
          entry.since = t;
          entry.loggedAt = 0;
        }
        entry.failures++;
        entry.lastError = `${doing}: ${summary(error)}`;
        if (t - entry.loggedAt >= REPEAT_LOG_MS) {
          entry.loggedAt = t;
          const detail = error instanceof StoreError ? `: ${error.message}` : '';
          log.error(
            { worker: name, ...logged(error), failures: entry.failures },
            `${name}: failed while ${doing}${detail}`,
          );
        }
      },
    };
  };
  return {
    healthOf,
    stopped(name: string) {
      const entry = reports.get(name);
      if (entry) {
        entry.state = 'stopped';
        entry.since = now();
      }
    },
    report(): Record<string, WorkerReport> {
      const out: Record<string, WorkerReport> = {};
      for (const [name, e] of reports) {
        out[name] = {
          state: e.state,
          since: new Date(e.since).toISOString(),
          ...(e.lastError ? { lastError: e.lastError, failures: e.failures } : {}),
        };
      }
      return out;
    },
    failing: () => [...reports.values()].some((e) => e.state === 'failing'),
  };
};

export type WorkerRegistry = ReturnType<typeof createWorkerRegistry>;
