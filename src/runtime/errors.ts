import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../parts/errors/api-error.ts';
import type { ProblemContext, ProblemRenderer } from '../parts/errors/runtime.ts';
import { formatBytes } from '../parts/limits/docs.ts';
import { StoreError } from '../storage/index.ts';

/** Fastify's own errors, by code, as catalogue errors. */
const FASTIFY_CODES: Record<string, () => ApiError> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => new ApiError('unsupported_media_type', 'Send the body as application/json.'),
  FST_ERR_CTP_INVALID_TYPE: () => new ApiError('unsupported_media_type', 'Send the body as application/json.'),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => new ApiError('invalid_json', 'The body is empty.'),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => new ApiError('bad_request', 'Content-Length does not match the body.'),
  FST_ERR_CTP_INVALID_JSON_BODY: () => new ApiError('invalid_json', 'The body is not valid JSON.'),
  FST_ERR_BAD_URL: () => new ApiError('not_found', 'No such path.'),
  FST_ERR_ASYNC_CONSTRAINT: () => new ApiError('bad_request', 'The request is malformed.'),
};

/** One line per storage fault a client is answered 503 for: what kind, and the database's own code (no stack). */
const logStorageFault = (error: StoreError, request: FastifyRequest) => {
  const cause = error.cause as { code?: unknown } | undefined;
  request.log.warn(
    { storage: error.kind, ...(typeof cause?.code === 'string' ? { code: cause.code } : {}) },
    `storage: ${error.message}`,
  );
};

/** Maps anything thrown during a request to a catalogued error; unknown errors are logged and answered 500. */
export const toApiError = (error: unknown, request: FastifyRequest): ApiError => {
  if (error instanceof ApiError) return error;
  if (error instanceof StoreError) {
    switch (error.kind) {
      case 'unique': {
        const fields = error.fields;
        const together = fields.length > 1 ? ' together' : '';
        const names = fields.length ? fields.join(' and ') : 'value';
        return new ApiError(
          'unique_violation',
          `Another record already has this ${names}.`,
          fields.map((f) => ({ pointer: `#/${f}`, code: 'unique', message: `${names} must be unique${together}` })),
          { field: error.field, ...(fields.length > 1 ? { fields } : {}) },
        );
      }
      case 'busy':
        logStorageFault(error, request);
        return new ApiError('busy', 'The database is busy; retry shortly.', undefined, undefined, {
          'retry-after': '1',
        });
      default:
        logStorageFault(error, request);
        return new ApiError('storage_unavailable', 'Storage is unavailable; retry later.', undefined, undefined, {
          'retry-after': '5',
        });
    }
  }
  const fastifyError = error as FastifyError;
  // Fastify refuses a Content-Length over the route's limit before reading, and cuts a longer stream at it.
  if (fastifyError?.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || fastifyError?.statusCode === 413) {
    const limit = request.routeOptions?.bodyLimit;
    return new ApiError(
      'payload_too_large',
      limit ? `The request body is larger than ${formatBytes(limit)}, the limit of this endpoint.` : undefined,
    );
  }
  const mapped = fastifyError?.code ? FASTIFY_CODES[fastifyError.code] : undefined;
  if (mapped) return mapped();
  if (fastifyError?.statusCode && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500)
    return new ApiError('bad_request');
  request.log.error({ err: error }, 'unhandled error');
  return new ApiError('internal', 'Something went wrong on our side; the request id identifies it in our logs.');
};

export const sendProblem = (
  render: ProblemRenderer,
  reply: FastifyReply,
  error: ApiError,
  where: string | ProblemContext,
) => {
  const problem = render(error, where);
  reply.code(problem.status).type(problem.contentType);
  if (problem.headers) reply.headers(problem.headers);
  if (error.code === 'method_not_allowed' && error.extensions?.allow)
    reply.header('allow', String(error.extensions.allow));
  return reply.send(problem.body);
};
