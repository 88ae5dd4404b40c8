import pg from 'pg';
import { createLocalSignals } from '../local-signals.ts';
import type { StoreChannel, StoreSignals } from '../store.ts';

const CHANNELS: ReadonlySet<string> = new Set(['events', 'keys', 'endpoints']);
const RECONNECT_MS = 1000;

/**
 * Signals across every instance on the database: writes NOTIFY `ninefold` with "<schema> <channel>" (the event
 * sequencer, key and endpoint writes), and one connection per store LISTENs, so a stream open on instance A wakes
 * for an event committed through B. The store's own writes are also told in process at once (local signals). A lost
 * listening connection is made again; every listener is told once it is back, since notifications may have been
 * missed meanwhile.
 */
export const createPgSignals = (
  options: { connectionString: string; schema: string },
  told: (channel: StoreChannel) => void,
): StoreSignals & { notify(channel: StoreChannel): void; start(): void; stop(): Promise<void> } => {
  const local = createLocalSignals();
  let client: pg.Client | undefined;
  let stopped = false;
  let started = false;
  const tell = (channel: StoreChannel) => {
    told(channel);
    local.notify(channel);
  };
  const connect = () => {
    if (stopped) return;
    const c = new pg.Client({ connectionString: options.connectionString });
    client = c;
    const retry = () => {
      if (client !== c) return;
      client = undefined;
      c.end().catch(() => undefined);
      if (!stopped) setTimeout(connect, RECONNECT_MS).unref();
    };
    c.on('error', retry);
    c.on('end', retry);
    c.on('notification', (message) => {
      const [schema, channel] = (message.payload ?? '').split(' ');
      if (schema === options.schema && channel && CHANNELS.has(channel)) tell(channel as StoreChannel);
    });
    c.connect()
      .then(() => c.query('LISTEN ninefold'))
      .then(() => {
        for (const channel of CHANNELS) tell(channel as StoreChannel);
      })
      .catch(retry);
  };
  return {
    subscribe(channel, listener) {
      return local.subscribe(channel, listener);
    },
    notify(channel) {
      local.notify(channel);
    },
    start() {
      if (started) return;
      started = true;
      connect();
    },
    async stop() {
      stopped = true;
      const c = client;
      client = undefined;
      await c?.end().catch(() => undefined);
    },
  };
};
