import type { LookupFunction } from 'node:net';
import type { Store } from '../storage/index.ts';
import type { DrainState } from './drain.ts';

export interface ServerOptions {
  readonly store: Store;
  /** A graceful shutdown in progress (readiness fails; answers keep their connections open at first). */
  readonly drain?: DrainState;
  /** pino level; 'silent' turns logging off. */
  readonly logLevel?: string;
  /** Where log lines go (one JSON line per write); standard output by default. */
  readonly logStream?: { write(line: string): void };
  readonly now?: () => Date;
  /** How often due timers are looked for (default 1 s). */
  readonly timerPollMs?: number;
  /** How often due webhook retries are looked for (default 250 ms; new events are looked for at once). */
  readonly webhookPollMs?: number;
  /** The resolver webhook deliveries connect through (tests stub DNS with it); node's by default. */
  readonly lookup?: LookupFunction;
  /** Redis for shared rate counters (NINEFOLD_REDIS_URL); overrides the spec's `limits.store`. */
  readonly redisUrl?: string;
  /** What every counter key starts with (default `nf:<service>:`); tests give each test its own. */
  readonly redisPrefix?: string;
  /** The event loop's lag in ms as `limits.overload` reads it (tests inject one); a sampled timer by default. */
  readonly eventLoopLag?: () => number;
}
