import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/** How long a shutdown waits for requests, streams and deliveries to finish before it cuts them (`--grace`). */
export const DEFAULT_GRACE_MS = 10_000;

/**
 * A connection is closed once it has had no request in progress and received no byte for this long: a request a
 * client sent before the signal has arrived by then, and is answered. It is a second, not less: a client that picked
 * a pooled keep-alive connection just before its balancer took this instance out of rotation may write on it only
 * later, when its own machine is busy, and a connection closed under that request resets it (seen at 250 ms with
 * the load average at 16 on two cores).
 */
const QUIET_MS = 1000;

/** At most this many event-loop turns are spent taking queued connections before the listening socket closes. */
const MAX_ACCEPT_TURNS = 100;

/** What the server reads of a shutdown in progress (ServerOptions.drain). */
export interface DrainState {
  /** True from the shutdown signal on: /readyz answers 503, so that a balancer sends no more. */
  readonly draining: boolean;
  /**
   * Whether an answer sent now leaves its connection open. During the first half of the grace it does: the client
   * may have more requests on the way on it (pipelined, or sent just before the signal), and an answer with
   * `Connection: close` would drop them. After that, answers say `Connection: close`.
   */
  keepsConnection(): boolean;
  /** Runs `fn` if the grace runs out (a worker cuts the work in hand). */
  onCut(fn: () => void): void;
}

/** A shutdown's hold on the server's connections. */
export interface Drain extends DrainState {
  /** Follows the server's connections; call before it listens. */
  watch(server: Server): void;
  /**
   * Starts draining: readiness fails, and every connection is closed once it is quiet (nothing in progress, nothing
   * received for QUIET_MS) instead of at once, as Node's `server.close()` would do to every idle one (cutting off a
   * request the client had already sent on it). Call before `server.close()`.
   */
  begin(): void;
  /**
   * Resolves once the connections the system had already accepted for the server (its listen queue) are the
   * server's: closing the listening socket resets those, with the requests their clients wrote on them.
   */
  acceptQueueTaken(): Promise<void>;
  /** Resolves when the grace is over (never, before `begin`). */
  readonly graceOver: Promise<void>;
  /** Cuts every connection still open and the workers' work in hand; how many connections there were. */
  cut(): number;
  /** Stops the drain's timers once the server has closed. */
  end(): void;
}

/** Node's http server keeps the response in progress on its socket (pipelined ones queue behind it). */
const answering = (socket: Socket) => (socket as Socket & { _httpMessage?: unknown })._httpMessage != null;

export const createDrain = (graceMs: number = DEFAULT_GRACE_MS): Drain => {
  const sockets = new Set<Socket>();
  const cutters: Array<() => void> = [];
  /** Bytes each connection had received at the last sweep, while it was idle. */
  const quietSince = new WeakMap<Socket, number>();
  let server: Server | undefined;
  /** Connections taken from the listen queue so far. */
  let accepted = 0;
  let startedAt = 0;
  let draining = false;
  let sweeper: NodeJS.Timeout | undefined;
  let graceTimer: NodeJS.Timeout | undefined;
  let graceEnded: () => void = () => {};
  const graceOver = new Promise<void>((done) => {
    graceEnded = done;
  });

  /** Closes each connection seen idle, with no byte received, at two sweeps in a row. */
  const sweep = () => {
    for (const socket of sockets) {
      if (answering(socket)) {
        quietSince.delete(socket);
        continue;
      }
      if (quietSince.get(socket) === socket.bytesRead) socket.destroy();
      else quietSince.set(socket, socket.bytesRead);
    }
  };

  return {
    get draining() {
      return draining;
    },
    keepsConnection: () => !draining || Date.now() - startedAt < graceMs / 2,
    onCut: (fn) => void cutters.push(fn),
    watch(watched) {
      server = watched;
      watched.on('connection', (socket: Socket) => {
        accepted++;
        sockets.add(socket);
        socket.once('close', () => sockets.delete(socket));
      });
    },
    begin() {
      if (draining) return;
      draining = true;
      startedAt = Date.now();
      // server.close() closes idle connections at once; the sweep closes them once quiet instead.
      if (server) server.closeIdleConnections = () => {};
      sweep();
      sweeper = setInterval(sweep, QUIET_MS);
      graceTimer = setTimeout(graceEnded, graceMs);
    },
    async acceptQueueTaken() {
      // libuv accepts every queued connection in the poll phase of a loop turn; a turn that took none means the
      // queue was empty. Bounded: a client that keeps connecting does not hold the shutdown.
      for (let turns = 0, quiet = 0; quiet < 2 && turns < MAX_ACCEPT_TURNS; turns++) {
        const before = accepted;
        await new Promise<void>((done) => setImmediate(done));
        quiet = accepted === before ? quiet + 1 : 0;
      }
    },
    graceOver,
    cut() {
      const open = sockets.size;
      for (const socket of sockets) socket.destroy();
      for (const fn of cutters) fn();
      return open;
    },
    end() {
      clearInterval(sweeper);
      clearTimeout(graceTimer);
    },
  };
};
