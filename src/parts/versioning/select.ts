import type { IncomingMessage } from 'node:http';
import type { FastifyRequest } from 'fastify';
import type { VersioningPlan } from './plan.ts';

/** The version a path-scheme request named in its first segment (after the base path), set by `rewriteVersionPath`. */
const pathVersions = new WeakMap<IncomingMessage, string>();

/** A segment that reads as a version (`v2`, `2026-09-01`): an undeclared one is 400, not a path of its own. */
const LOOKS_LIKE_VERSION = /^(v\d+(\.\d+)*|\d{4}-\d{2}-\d{2})$/;

/**
 * The path scheme, for Fastify's rewriteUrl: `/api/2026-01-15/customers` is routed as `/api/customers`, and the
 * version is remembered for the request's version step. Other paths pass unchanged.
 */
export const rewriteVersionPath = (plan: VersioningPlan, basePath: string) => {
  const base = basePath.replace(/\/+$/, '');
  return (req: IncomingMessage): string => {
    const url = req.url ?? '/';
    if (base && !url.startsWith(`${base}/`)) return url;
    const rest = url.slice(base.length);
    const match = /^\/([^/?#]+)(?=[/?#]|$)/.exec(rest);
    const segment = match?.[1];
    if (segment === undefined || !(plan.byId.has(segment) || LOOKS_LIKE_VERSION.test(segment))) return url;
    pathVersions.set(req, segment);
    const tail = rest.slice(segment.length + 1);
    return `${base}${tail.startsWith('/') ? tail : `/${tail}`}`;
  };
};

/** `version=…` of the Accept member that names the service's media type. */
const fromAccept = (accept: string, mediaType: string, name: string): string | undefined => {
  for (const range of accept.split(',')) {
    const [type, ...params] = range.split(';').map((s) => s.trim());
    if (type?.toLowerCase() !== mediaType) continue;
    for (const param of params) {
      const eq = param.indexOf('=');
      if (eq > 0 && param.slice(0, eq).trim().toLowerCase() === name.toLowerCase())
        return param
          .slice(eq + 1)
          .trim()
          .replace(/^"(.*)"$/, '$1');
    }
  }
  return undefined;
};

/** The version the request names under the spec's scheme; undefined when it names none. */
export const requestedVersion = (plan: VersioningPlan, request: FastifyRequest): string | undefined => {
  switch (plan.scheme) {
    case 'header': {
      const given = request.headers[plan.name];
      return Array.isArray(given) ? given.join(',') : given;
    }
    case 'query': {
      const query = request.query as Record<string, string | string[] | undefined>;
      const given = query[plan.name];
      // Not a filter: the list handler must never see it.
      delete query[plan.name];
      return Array.isArray(given) ? given.join(',') : given;
    }
    case 'media-type': {
      const accept = request.headers.accept;
      return typeof accept === 'string' ? fromAccept(accept, plan.mediaType, plan.name) : undefined;
    }
    default:
      return pathVersions.get(request.raw);
  }
};
