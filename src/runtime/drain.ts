import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { ApiError } from '../parts/errors/api-error.ts';

/** How long a shutdown waits for requests, streams and deliveries to finish before it cuts them (`--grace`). */
export const DEFAULT_GRACE_MS = 10_000;

/**
 * A connection that has never been answered is closed once it has had no request in progress and received no byte for
 * this long: a request a client sent on it before the signal has arrived by then, and is answered. One that has been
 * answered is left to Node's keep-alive time-out instead (KEEP_ALIVE_MS after its last answer), the time its answers
 * advertised (`Keep-Alive: timeout=5`): a client reuses an idle connection only for less than that (undici until 2 s
 * before it, Node's http.Agent until 1 s before), so no request of a compliant client meets the close. Closing
 * earlier is the keep-alive race: a client that picked a pooled connection just before its balancer took this
 * instance out of rotation writes on it as the server closes it, and the request is reset (seen at a quiet time of
 * 250 ms, then of 1 s, under load).
 */
const QUIET_MS = 1000;

/** The keep-alive time-out of the server's connections (server.ts): a drain with idle ones open lasts this long. */
export const KEEP_ALIVE_MS = 5_000;

/** The answer to a request this instance will not serve because it is shutting down: try another one. */
export const shuttingDown = () =>
  new ApiError('shutting_down', 'This instance is shutting down.', undefined, undefined, { 'retry-after': '1' });

/** At most this many event-loop turns are spent taking queued connections before the listening socket closes. */
const MAX_ACCEPT_TURNS = 100;

/** What the server reads of a shutdown in progress (ServerOptions.drain). */
export interface DrainState {
  /** True from the shutdown signal on: /readyz answers 503, so that a balancer sends no more. */
  readonly draining: boolean;
  /**
   * Marks the answer to a request received during the drain `Connection: close`, so that its client sends no more on
   * that connection; on a connection with requests pipelined behind it, only the answer to the last one received
   * (Node closes the connection after an answer that says so, dropping the answers queued behind it, whose requests
   * it has already handed to the server). False when the request cannot be answered: an answer already sent on its
   * connection said `Connection: close`; it must then not be carried out.
   */
  closesAfter(request: IncomingMessage, reply: ServerResponse): boolean;
  /** Runs `fn` if the grace runs out (a worker cuts the work in hand). */
  onCut(fn: () => void): void;
}

/** A shutdown's hold on the server's connections. */
export interface Drain extends DrainState {
  /** Follows the server's connections; call before it listens. */
  watch(server: Server): void;
  /**
   * Starts draining: readiness fails, every answer from now on says `Connection: close`, and an idle connection is
   * closed only once its client no longer reuses it (see QUIET_MS), not at once, as Node's `server.close()` would do
   * to every idle one (resetting a request the client is writing on it). Call before `server.close()`.
   */
  begin(): void;
  /**
   * Resolves once no new connection has come for QUIET_MS (at once if none has come that long): balancers have seen
   * readiness fail and stopped connecting. At the latest half the grace after it is called, so that a client that
   * keeps connecting (a health check polling every few milliseconds) leaves the work in hand the other half. Until
   * then the listening socket stays open and a new connection is served like the others (each answer says
   * `Connection: close`). Closing it while clients still connect resets every connection the kernel has queued for
   * it and not yet handed over, with the request its client wrote on it: a reset a client cannot tell from a lost
   * request, where a refusal (the listener closed) is retried.
   */
  connectionsStopped(): Promise<void>;
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

/** What Node's http server keeps on a connection's socket. */
type HttpSocket = Socket & {
  /** The answer in progress (pipelined ones queue behind it). */
  _httpMessage?: ServerResponse | null;
  /** Its parser: `incoming` is the last request received on it. */
  parser?: { incoming?: IncomingMessage | null } | null;
};

const answering = (socket: Socket) => (socket as HttpSocket)._httpMessage != null;

export const createDrain = (graceMs: number = DEFAULT_GRACE_MS): Drain => {
  const sockets = new Set<Socket>();
  const cutters: Array<() => void> = [];
  /** Bytes each connection had received at the last sweep, while it was idle. */
  const quietSince = new WeakMap<Socket, number>();
  /** The answer on each connection that says `Connection: close`. */
  const closer = new WeakMap<Socket, ServerResponse>();
  let server: Server | undefined;
  /** Connections taken from the listen queue so far, and when the last one was (performance.now()). */
  let accepted = 0;
  let lastAcceptedAt = Number.NEGATIVE_INFINITY;
  let quietTimer: NodeJS.Timeout | undefined;
  let draining = false;
  let sweeper: NodeJS.Timeout | undefined;
  let graceTimer: NodeJS.Timeout | undefined;
  let graceEnded: () => void = () => {};
  const graceOver = new Promise<void>((done) => {
    graceEnded = done;
  });

  /** Closes each connection never answered that is seen idle, with no byte received, at two sweeps in a row. */
  const sweep = () => {
    for (const socket of sockets) {
      // Answered before: its keep-alive time-out closes it (see QUIET_MS).
      if (socket.bytesWritten > 0) continue;
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
    closesAfter(request, reply) {
      const socket = request.socket;
      const before = closer.get(socket);
      if (before?.headersSent) return false;
      before?.removeHeader('connection');
      reply.setHeader('connection', 'close');
      closer.set(socket, reply);
      return true;
    },
    onCut: (fn) => void cutters.push(fn),
    watch(watched) {
      server = watched;
      watched.on('connection', (socket: Socket) => {
        accepted++;
        lastAcceptedAt = performance.now();
        sockets.add(socket);
        socket.once('close', () => sockets.delete(socket));
      });
    },
    begin() {
      if (draining) return;
      draining = true;
      // An answer still to come to a request received before the signal says `Connection: close` too (else its
      // connection stays open a keep-alive time-out after it, past the grace), unless more requests came after it.
      for (const socket of sockets as Set<HttpSocket>) {
        const reply = socket._httpMessage;
        if (reply && !reply.headersSent && socket.parser?.incoming === reply.req) {
          reply.setHeader('connection', 'close');
          closer.set(socket, reply);
        }
      }
      // server.close() closes idle connections at once; the sweep closes them once quiet instead.
      if (server) server.closeIdleConnections = () => {};
      sweep();
      sweeper = setInterval(sweep, QUIET_MS);
      graceTimer = setTimeout(graceEnded, graceMs);
    },
    connectionsStopped() {
      const until = performance.now() + graceMs / 2;
      return new Promise<void>((done) => {
        const check = () => {
          const now = performance.now();
          const quietFor = now - lastAcceptedAt;
          if (quietFor >= QUIET_MS || now >= until) return done();
          quietTimer = setTimeout(check, Math.min(QUIET_MS - quietFor, until - now));
        };
        check();
      });
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
      clearTimeout(quietTimer);
    },
  };
};
