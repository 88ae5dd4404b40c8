import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import type { ApiError } from '../parts/errors/api-error.ts';
import type { ProblemContext, ProblemRenderer } from '../parts/errors/runtime.ts';
import type { AnswerTurn } from './answer-turn.ts';

/** Stands for the request's path while a problem is rendered ahead of time: letters only, so JSON keeps it as is. */
const PATH_MARK = 'NinefoldRequestPathMark';

/**
 * A problem rendered once at start-up and sent many times: a refusal answered under load must cost less than the
 * work it refuses. No error object, no error handler, no serialisation per request: the body is the rendered text
 * with the request's path put where the renderer put `instance`. `headers` are the request's own (Retry-After, …).
 */
export type CannedProblem = (reply: FastifyReply, headers: Readonly<Record<string, string>>) => void;

/**
 * The same, written on Node's own response by a step that runs before Fastify (the front door), in one writeHead and
 * at the end of the turn with the other answers (answer-turn.ts): `headers` are the request's own as a flat list
 * (name, value, name, value…), and `url` is the request's target as Fastify would route it.
 */
export type RawProblem = (response: ServerResponse<IncomingMessage>, url: string, headers: string[]) => void;

/** The rendered problem, split where the path goes: the text before it and the text after it. */
const rendered = (render: ProblemRenderer, error: ApiError, where: Omit<ProblemContext, 'instance'>) => {
  const problem = render(error, { ...where, instance: PATH_MARK });
  const at = problem.body.indexOf(PATH_MARK);
  return {
    status: problem.status,
    fixed: { 'content-type': problem.contentType, ...problem.headers } as Record<string, string>,
    head: at < 0 ? problem.body : problem.body.slice(0, at),
    tail: at < 0 ? undefined : problem.body.slice(at + PATH_MARK.length),
  };
};

/** Printable ASCII but `"` and `\`: text JSON keeps as it is, as nearly every request path is. */
const PLAIN = /^[!#-[\]-~]*$/;

/** The body for a request target: its path as JSON string content (escaped, without the quotes the mark lacks). */
const bodyFor = (head: string, tail: string | undefined, url: string): string => {
  if (tail === undefined) return head;
  const query = url.indexOf('?');
  const path = query < 0 ? url : url.slice(0, query);
  return head + (PLAIN.test(path) ? path : JSON.stringify(path).slice(1, -1)) + tail;
};

export const cannedProblem = (
  render: ProblemRenderer,
  error: ApiError,
  where: Omit<ProblemContext, 'instance'>,
): CannedProblem => {
  const { status, fixed, head, tail } = rendered(render, error, where);
  return (reply, headers) => {
    reply.code(status).headers(fixed).headers(headers);
    reply.send(bodyFor(head, tail, reply.request.url));
  };
};

const end = (response: ServerResponse<IncomingMessage>, body: string) => void response.end(body);

export const rawProblem = (
  render: ProblemRenderer,
  error: ApiError,
  where: Omit<ProblemContext, 'instance'>,
  turn: AnswerTurn,
): RawProblem => {
  const { status, fixed, head, tail } = rendered(render, error, where);
  const fixedList = Object.entries(fixed).flat();
  // The last target's body and length: a client repeating a request it is refused gets them without any work.
  let lastUrl = '';
  let lastBody = '';
  let lastLength = '';
  return (response, url, headers) => {
    if (url !== lastUrl) {
      lastBody = bodyFor(head, tail, url);
      lastLength = String(Buffer.byteLength(lastBody));
      lastUrl = url;
    }
    const body = lastBody;
    for (const item of fixedList) headers.push(item);
    headers.push('content-length', lastLength);
    response.writeHead(status, headers);
    turn.later(end, response, body);
  };
};
