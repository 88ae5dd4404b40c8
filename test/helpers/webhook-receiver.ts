import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { type AddressInfo, createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';

/**
 * How the receiver answers one call:
 * - `status` (after `delayMs`, with `headers`): a plain answer, e.g. 500, 302 + Location, 429 + Retry-After;
 * - `trickle`: a status line, then one byte of a header (or of the body) every `everyMs`, never finishing;
 * - `hugeBytes`: 200 and a body that long, written as fast as the client reads it;
 * - `reset`: an RST on the connection, before any answer or after the headers and a bit of the body.
 */
export type Mode =
  | { readonly status: number; readonly headers?: Record<string, string>; readonly delayMs?: number; body?: string }
  | { readonly trickle: 'headers' | 'body'; readonly everyMs: number }
  | { readonly hugeBytes: number }
  | { readonly reset: 'before-answer' | 'mid-body'; readonly status?: number };

/** One call the receiver got. Times are `Date.now()` values. */
export interface Hit {
  /** When the request body had arrived. */
  readonly at: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly mode: Mode;
  /** When the answer was complete, or the connection reset. */
  answeredAt?: number;
  /** When the connection closed (the client gave up, or the answer was done). */
  closedAt?: number;
  /** Body bytes handed to the socket (huge and trickle modes). */
  sentBytes: number;
}

export interface Receiver {
  readonly url: string;
  readonly port: number;
  readonly hits: Hit[];
  /** The answers to the next calls, in order; once they are spent, `respond`, else 200. */
  queue(...modes: Mode[]): void;
  /** Answers chosen per call (by body, say) before the queue is consulted; undefined falls through. */
  respond: ((body: string, index: number) => Mode | undefined) | undefined;
  /** TCP connections accepted so far. */
  readonly connections: number;
  /** Closes the port (connections are refused) until `up`. */
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

const OK: Mode = { status: 200 };

/** A programmable webhook receiver on a real port (loopback unless `host` says otherwise). */
export const startReceiver = async (host = '127.0.0.1'): Promise<Receiver> => {
  const hits: Hit[] = [];
  const planned: Mode[] = [];
  let connections = 0;
  const timers = new Set<NodeJS.Timeout>();
  const later = (ms: number, fn: () => void) => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
  };
  const receiver: Receiver = {
    url: '',
    port: 0,
    hits,
    queue: (...modes) => planned.push(...modes),
    respond: undefined,
    get connections() {
      return connections;
    },
    down: async () => {
      server.closeAllConnections();
      await new Promise<void>((ok) => server.close(() => ok()));
    },
    up: () => new Promise<void>((ok) => server.listen(receiver.port, host, ok)),
    close: async () => {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      if (server.listening) await new Promise<void>((ok) => server.close(() => ok()));
    },
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const mode = receiver.respond?.(body, hits.length) ?? planned.shift() ?? OK;
      const hit: Hit = { at: Date.now(), headers: req.headers, body, mode, sentBytes: 0 };
      hits.push(hit);
      const socket = req.socket;
      socket.on('close', () => {
        hit.closedAt = Date.now();
      });
      if ('reset' in mode) {
        if (mode.reset === 'before-answer') {
          hit.answeredAt = Date.now();
          socket.resetAndDestroy();
        } else {
          res.writeHead(mode.status ?? 200, { 'content-length': '1000' });
          res.write('x'.repeat(100));
          later(50, () => {
            hit.answeredAt = Date.now();
            socket.resetAndDestroy();
          });
        }
      } else if ('status' in mode) {
        later(mode.delayMs ?? 0, () => {
          if (res.destroyed) return;
          res.writeHead(mode.status, mode.headers).end(mode.body ?? 'ok', () => {
            hit.answeredAt = Date.now();
          });
        });
      } else if ('trickle' in mode) {
        // Raw bytes: a status line, then a header (or a body) that never completes.
        socket.write(
          mode.trickle === 'headers'
            ? 'HTTP/1.1 200 OK\r\nx-trickle: '
            : 'HTTP/1.1 200 OK\r\ncontent-length: 100000\r\n\r\n',
        );
        const drip = setInterval(() => {
          if (socket.destroyed) return clearInterval(drip);
          socket.write('a');
          hit.sentBytes++;
        }, mode.everyMs);
        socket.on('close', () => clearInterval(drip));
      } else if ('hugeBytes' in mode) {
        res.writeHead(200, { 'content-length': String(mode.hugeBytes) });
        const chunk = Buffer.alloc(64 * 1024, 0x61);
        const pump = () => {
          while (hit.sentBytes < mode.hugeBytes) {
            if (res.destroyed) return;
            hit.sentBytes += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end();
        };
        res.on('error', () => undefined);
        pump();
      }
    });
  });
  // Keep-alive connections outlive every pause of a test, so a reused connection is never closed under a request.
  server.keepAliveTimeout = 60_000;
  server.on('connection', () => {
    connections++;
  });
  await new Promise<void>((ok) => server.listen(0, host, ok));
  const port = (server.address() as AddressInfo).port;
  Object.assign(receiver, { port, url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}/hook` });
  return receiver;
};

/** A loopback listener nothing may ever reach: it counts the TCP connections it accepts (IPv4 and IPv6). */
export interface Canary {
  readonly port: number;
  readonly connections: number;
  close(): Promise<void>;
}

export const startCanary = async (): Promise<Canary> => {
  let connections = 0;
  const listen = (server: NetServer, host: string) =>
    new Promise<boolean>((ok) => {
      server.once('error', () => ok(false));
      server.listen(0, host, () => ok(true));
    });
  const count = (socket: Socket) => {
    connections++;
    socket.destroy();
  };
  let server = createNetServer(count);
  // Dual stack where the host has IPv6, so a connection to ::1 would be counted too.
  if (!(await listen(server, '::'))) {
    server = createNetServer(count);
    await listen(server, '127.0.0.1');
  }
  return {
    port: (server.address() as AddressInfo).port,
    get connections() {
      return connections;
    },
    close: () => new Promise<void>((ok) => server.close(() => ok())),
  };
};

/** The receivers and canaries one test file starts, closed together when it ends. */
export const receiverPool = () => {
  const open: Array<{ close(): Promise<void> }> = [];
  const kept = <T extends { close(): Promise<void> }>(made: T): T => {
    open.push(made);
    return made;
  };
  return {
    receiver: async (host?: string) => kept(await startReceiver(host)),
    canary: async () => kept(await startCanary()),
    async closeAll() {
      for (const one of open.splice(0)) await one.close();
    },
  };
};
