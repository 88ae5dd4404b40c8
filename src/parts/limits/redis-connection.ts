import { Redis } from 'ioredis';

/** How long a counter command may take before the request goes on without it (onStoreFailure decides how). */
export const COMMAND_TIMEOUT_MS = 200;
/** How long start-up waits for Redis before serving without it (the policy applies meanwhile). */
const CONNECT_WAIT_MS = 2000;

/** What a counter part tells the log: one warning when Redis goes away, one line when it is back. */
export interface OutageLog {
  warn(object: Record<string, unknown>, message: string): void;
  info(object: Record<string, unknown>, message: string): void;
}

/** A Redis client for counters, with the script commands defined once, and its health for the log. */
export interface CounterConnection {
  readonly redis: Redis;
  /** Key prefix: every key this service writes starts with it. */
  readonly prefix: string;
  /** Runs a counter command; its failure is remembered (one warning per outage) and rethrown. */
  run<T>(command: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/**
 * Opens Redis for counters: no offline queue and no retries per command (a command while Redis is away fails at
 * once instead of waiting), a short command time-out, and reconnection in the background every second at most.
 */
export const openCounterConnection = async (
  url: string,
  prefix: string,
  log: OutageLog,
): Promise<CounterConnection> => {
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: COMMAND_TIMEOUT_MS,
    connectTimeout: CONNECT_WAIT_MS,
    retryStrategy: (times) => Math.min(100 * times, 1000),
  });
  let down = false;
  // Without a listener ioredis prints every connection error; the outage is logged once, below.
  redis.on('error', () => {});
  redis.on('ready', () => {
    if (down) log.info({ store: 'redis' }, 'limits: Redis is back; counters are shared again');
    down = false;
  });
  try {
    await redis.connect();
  } catch {
    down = true;
    log.warn({ store: 'redis' }, 'limits: Redis cannot be reached at start-up; onStoreFailure applies until it can');
  }
  return {
    redis,
    prefix,
    async run(command) {
      try {
        return await command();
      } catch (error) {
        if (!down)
          log.warn(
            { store: 'redis', error: (error as Error).message },
            'limits: Redis failed; onStoreFailure applies until it is back',
          );
        down = true;
        throw error;
      }
    },
    async close() {
      redis.disconnect();
    },
  };
};
