import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../parts/errors/api-error.ts';
import type { ProblemRenderer } from '../parts/errors/runtime.ts';
import { formatBytes } from '../parts/limits/docs.ts';
import { sendProblem } from './errors.ts';

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};

/**
 * Errors Fastify's router meets before any route runs: a path that does not decode, a path segment over the
 * parameter limit. Answered as catalogued problems that never echo the path.
 */
export const frameworkErrors =
  (render: ProblemRenderer) => (error: FastifyError, _request: FastifyRequest, reply: FastifyReply) => {
    const problem =
      error.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? new ApiError('uri_too_long', 'A path segment is longer than 256 characters.')
        : error.code === 'FST_ERR_BAD_URL'
          ? new ApiError('bad_request', 'The path is not a valid URL.')
          : new ApiError('bad_request', 'The request is malformed.');
    reply.header('x-content-type-options', 'nosniff');
    return sendProblem(render, reply, problem, '');
  };

/**
 * Errors Node's HTTP parser meets before Fastify sees a request (headers too large, a malformed request line, a
 * Content-Length that does not match what follows, slow headers): answered on the socket as catalogued problems,
 * then the connection is closed, since what follows on it cannot be trusted.
 */
export const clientErrorHandler =
  (render: ProblemRenderer, headerBytes: number) =>
  (error: NodeJS.ErrnoException, socket: Socket): void => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const problem =
      error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new ApiError('request_timeout', 'The request was not received in time.')
        : error.code === 'HPE_HEADER_OVERFLOW'
          ? new ApiError(
              'request_header_fields_too_large',
              `The request line and headers are over ${formatBytes(headerBytes)}.`,
            )
          : new ApiError('bad_request', 'The HTTP request is malformed.');
    const rendered = render(problem);
    if (!socket.writable) return void socket.destroy();
    const body = Buffer.from(rendered.body);
    const head =
      `HTTP/1.1 ${rendered.status} ${REASONS[rendered.status] ?? 'Error'}\r\n` +
      `Content-Type: ${rendered.contentType}\r\nContent-Length: ${body.length}\r\n` +
      'X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n';
    socket.end(Buffer.concat([Buffer.from(head), body]));
  };
