import type { FastifyReply } from 'fastify';
import type { Exchange, Step } from '../../runtime/lifecycle.ts';
import type { ServerPart } from '../../runtime/part.ts';
import { ApiError, type FieldError } from '../errors/api-error.ts';
import { createRecordDown, shiftAnswer, shiftQuery } from './answer-shift.ts';
import { newestTags, versionedTag } from './etag-shift.ts';
import { historyDown } from './history-shift.ts';
import type { VersioningPlan, VersionPlan } from './plan.ts';
import { requestedVersion } from './select.ts';
import type { RecordShift } from './shift.ts';
import { createVersionUsage, versionUsageRoute } from './usage.ts';

const WRITES = new Set(['create', 'update', 'replace']);
const CONDITIONS = ['if-match', 'if-none-match'] as const;

const addVary = (reply: FastifyReply, name: string) => {
  const current = reply.getHeader('vary');
  const list = typeof current === 'string' && current ? `${current}, ${name}` : name;
  reply.header('vary', list);
};

/** RFC 9745 and RFC 8594 on every answer of a deprecated version. */
const retirementHeaders = (reply: FastifyReply, version: VersionPlan) => {
  if (!version.deprecated) return;
  const link = version.link ?? '/docs';
  if (version.deprecation !== undefined) reply.header('deprecation', `@${version.deprecation}`);
  const links = [`<${link}>; rel="deprecation"; type="text/html"`];
  if (version.sunset) {
    reply.header('sunset', version.sunset);
    links.push(`<${link}>; rel="sunset"; type="text/html"`);
  }
  const current = reply.getHeader('link');
  reply.header('link', typeof current === 'string' && current ? `${current}, ${links.join(', ')}` : links.join(', '));
};

/**
 * Errors of the newest version as an older one names them: pointers and the field names messages quote, and the
 * `currentEtag` of a 412 in the version's spelling (when its records differ, `tagged`).
 */
const shiftError = (shift: RecordShift | undefined, tagged: string | undefined) => (error: ApiError) => {
  const etag = error.extensions?.currentEtag;
  const retag = tagged !== undefined && typeof etag === 'string';
  if (!retag && (!shift || (!error.errors?.length && !error.detail))) return error;
  const field = (e: FieldError): FieldError =>
    shift ? { ...e, pointer: shift.pointer(e.pointer), message: shift.message(e.message) } : e;
  return new ApiError(
    error.code,
    error.detail === undefined || !shift ? error.detail : shift.message(error.detail),
    error.errors?.map(field),
    retag ? { ...error.extensions, currentEtag: versionedTag(etag, tagged) } : error.extensions,
    error.headers,
  );
};

/**
 * Part 9 on the server: every route but the built-in pages learns its version before the body is read (the
 * scheme, else the caller's key, else the default), answers in it, and says so. A request in an older version has
 * its body shifted up to the newest before validation and its answer shifted back down; the newest costs a lookup.
 */
export const versioningPart: ServerPart = {
  name: 'versioning',
  install(host) {
    const { plan, ctx } = host;
    const versioning: VersioningPlan | undefined = plan.versioning;
    if (!versioning) return;
    const { newest, byId, ids } = versioning;
    const header = plan.spec.versioning?.name ?? 'Api-Version';
    const vary = versioning.scheme === 'header' ? header : versioning.scheme === 'media-type' ? 'Accept' : '';
    const records = createRecordDown(plan, versioning);
    const listing = ids.join(', ');
    const usage = createVersionUsage(ctx);
    host.worker('version usage', usage.start);
    // An admin route needs an admin to call it: a spec without auth schemes has none (it would be public).
    if (plan.auth.schemes.size > 0) host.route(versionUsageRoute(ctx, usage));
    const shiftOf = (exchange: Exchange): RecordShift | undefined => {
      const resource = exchange.route.kind.resource;
      return exchange.version === newest || !resource
        ? undefined
        : versioning.shifts.get(exchange.version ?? '')?.get(resource);
    };

    host.step('version', (route) => {
      if (route.root) return undefined;
      const list = route.kind.action === 'list' && !route.kind.custom;
      return (exchange) => {
        const { request, reply } = exchange;
        const pinned = exchange.principal?.claims.apiVersion;
        const named =
          requestedVersion(versioning, request)?.trim() || (typeof pinned === 'string' ? pinned : undefined);
        const id = named ?? versioning.fallback;
        const version = byId.get(id);
        if (!version)
          throw new ApiError(
            'unsupported_version',
            `API version "${id.slice(0, 64)}" is not served; served versions: ${listing}.`,
            undefined,
            { versions: [...ids] },
          );
        exchange.version = id;
        usage.count(id, exchange.principal?.subject ?? '');
        reply.header('api-version', id);
        if (vary) addVary(reply, vary);
        retirementHeaders(reply, version);
        if (version.sunsetMs !== undefined && ctx.now().getTime() >= version.sunsetMs)
          throw new ApiError(
            'version_sunset',
            `API version ${id} was retired on ${version.sunset}; served versions: ${listing}.`,
            undefined,
            { versions: ids.filter((v) => !isSunset(byId.get(v), ctx.now())) },
          );
        if (id === newest) return;
        const shift = shiftOf(exchange);
        const resource = route.kind.resource;
        const tagged = resource && !route.kind.custom && records.differs(id, resource) ? id : undefined;
        if (tagged)
          for (const name of CONDITIONS) {
            const given = request.headers[name];
            if (typeof given === 'string') request.headers[name] = newestTags(given, tagged);
          }
        if (!shift && !tagged) return;
        exchange.reshapeError = shiftError(shift, tagged);
        if (list && shift) shiftQuery(request.query as Record<string, unknown>, shift);
      };
    });

    host.step('parse', (route): Step | undefined => {
      const { resource, action, custom } = route.kind;
      if (!resource || custom || !WRITES.has(action)) return undefined;
      return (exchange) => {
        if (exchange.version === newest) return;
        const shift = shiftOf(exchange);
        if (shift) exchange.body = shift.up(exchange.body);
      };
    });

    host.step('answer', (route): Step | undefined => {
      const { resource: name, action, custom } = route.kind;
      const resource = name ? plan.resourcesByName.get(name) : undefined;
      if (!resource || custom || action === 'delete') return undefined;
      const list = action === 'list';
      const history = action === 'history';
      return (exchange) => {
        const version = exchange.version;
        const out = exchange.output;
        if (version === newest || version === undefined || !out) return;
        if (!records.differs(version, resource.name)) return;
        const etag = out.headers?.etag;
        const headers = etag ? { ...out.headers, etag: versionedTag(etag, version) } : out.headers;
        if (!out.body || out.status < 200 || out.status > 299) {
          if (etag) exchange.output = { ...out, ...(headers ? { headers } : {}) };
          return;
        }
        const parsed = JSON.parse(out.body);
        const shift = versioning.shifts.get(version)?.get(resource.name);
        const body = history
          ? shift
            ? historyDown(shift, parsed)
            : parsed
          : shiftAnswer(resource, list, parsed, (r) => records.down(version, resource.name, r));
        exchange.output = { ...out, body: JSON.stringify(body), ...(headers ? { headers } : {}) };
      };
    });
  },
};

const isSunset = (version: VersionPlan | undefined, now: Date) =>
  version?.sunsetMs !== undefined && now.getTime() >= version.sunsetMs;
