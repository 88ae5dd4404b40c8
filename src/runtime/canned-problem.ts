import type { FastifyReply } from 'fastify';
import type { ApiError } from '../parts/errors/api-error.ts';
import type { ProblemContext, ProblemRenderer } from '../parts/errors/runtime.ts';

/** Stands for the request's path while a problem is rendered ahead of time: letters only, so JSON keeps it as is. */
const PATH_MARK = 'NinefoldRequestPathMark';

/**
 * A problem rendered once at start-up and sent many times: a refusal answered under load must cost less than the
 * work it refuses. No error object, no error handler, no serialisation per request: the body is the rendered text
 * with the request's path put where the renderer put `instance`. `headers` are the request's own (Retry-After, …).
 */
export type CannedProblem = (reply: FastifyReply, headers: Readonly<Record<string, string>>) => void;

export const cannedProblem = (
  render: ProblemRenderer,
  error: ApiError,
  where: Omit<ProblemContext, 'instance'>,
): CannedProblem => {
  const rendered = render(error, { ...where, instance: PATH_MARK });
  const at = rendered.body.indexOf(PATH_MARK);
  const head = at < 0 ? rendered.body : rendered.body.slice(0, at);
  const tail = at < 0 ? '' : rendered.body.slice(at + PATH_MARK.length);
  const fixed = { 'content-type': rendered.contentType, ...rendered.headers };
  return (reply, headers) => {
    reply.code(rendered.status).headers(fixed).headers(headers);
    if (at < 0) return void reply.send(head);
    const url = reply.request.url;
    const query = url.indexOf('?');
    // The path as JSON string content (escaped, without the quotes the mark did not have either).
    const path = JSON.stringify(query < 0 ? url : url.slice(0, query)).slice(1, -1);
    reply.send(head + path + tail);
  };
};
