import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/**
 * The lifecycle's first step, run on Node's own request before Fastify routes it and builds its request and reply:
 * a part that can decide a request from what is known before routing (the client address, the method and path)
 * answers it here for a fraction of what any answer from a Fastify hook costs. `url` is the target as Fastify will
 * route it (after the path-versioning rewrite). The door returns true to hand the request on to the rest of the
 * lifecycle at once; false when it answered the request, or will hand it on later (after I/O: Redis) by calling
 * `pass` once. `pass` is the same function for every request: a door calls it with the request and its response.
 */
export type FrontDoor = (
  request: IncomingMessage,
  response: ServerResponse<IncomingMessage>,
  url: string,
  pass: (request: IncomingMessage, response: ServerResponse<IncomingMessage>) => void,
) => boolean;

/** What the pipeline offers a front door: the bookkeeping every answer gets, done the server's way. */
export interface FrontDoorHost {
  /** The headers every answer carries (X-Request-Id, nosniff), as a new flat list the door adds its own to. */
  headers(request: IncomingMessage): string[];
  /** Tells the server an answer was sent at the door: it counts the request, and logs its line as Fastify's are. */
  answered(request: IncomingMessage, path: string, status: number, requestId: string): void;
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** The request's id: the client's X-Request-Id when it is a safe token, else a new one. */
export const requestIdOf = (request: IncomingMessage): string => {
  const given = request.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
};

/**
 * Puts the door in front of Fastify's handler on the server (Fastify's own listener is its only `request`
 * listener). While `bypass` says so (a drain, an overloaded loop) every request goes to Fastify as before.
 */
export const installFrontDoor = (
  server: Server,
  door: FrontDoor,
  rewrite: ((request: IncomingMessage) => string) | undefined,
  bypass: (request: IncomingMessage) => boolean,
) => {
  const [fastify, ...others] = server.listeners('request') as Array<
    (request: IncomingMessage, response: ServerResponse<IncomingMessage>) => void
  >;
  if (!fastify || others.length > 0) return;
  server.removeListener('request', fastify);
  // No closure per request: the door is handed Fastify's own listener to call later.
  server.on('request', (request: IncomingMessage, response: ServerResponse<IncomingMessage>) => {
    if (bypass(request)) return fastify(request, response);
    let now: boolean;
    try {
      now = door(request, response, rewrite ? rewrite(request) : (request.url ?? '/'), fastify);
    } catch {
      // A listener that throws would take the process down: the request goes on to Fastify, which answers it.
      now = !response.headersSent;
    }
    if (now) fastify(request, response);
  });
};
