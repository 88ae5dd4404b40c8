import type { FastifyReply } from 'fastify';
import type { Exchange, Step } from '../../runtime/lifecycle.ts';
import type { ServerPart } from '../../runtime/part.ts';
import { ApiError, type FieldError } from '../errors/api-error.ts';
import { createRecordDown, shiftAnswer, shiftQuery } from './answer-shift.ts';
import { newestTags, versionedTag } from './etag-shift.ts';
import { historyDown } from './history-shift.ts';
import type { VersioningPlan, VersionPlan } from './plan.ts';
import { requestedVersion } from './select.ts';
import type { RecordShift, WriteAction } from './shift.ts';
import { loadTransforms } from './transform.ts';
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
 * Errors of the newest version as an older one answers them: pointers and the field names messages quote, the code
 * and status an error change replaced, only the transitions that version has in `allowedTransitions`, and the
 * `currentEtag` of a 412 in the version's spelling (when its records differ, `tagged`).
 */
/** Errors raised while shifting a body up: already in the caller's names, so never translated again. */
const inCallerNames = new WeakSet<ApiError>();

const shiftError =
  (
    shift: RecordShift | undefined,
    tagged: string | undefined,
    codes: ReadonlyMap<string, { code: string; status?: number }> | undefined,
    transitionAbsent: ((name: string) => boolean) | undefined,
  ) =>
  (error: ApiError) => {
    if (inCallerNames.has(error)) return error;
    const etag = error.extensions?.currentEtag;
    const retag = tagged !== undefined && typeof etag === 'string';
    const old = codes?.get(error.code);
    const allowed = error.extensions?.allowedTransitions;
    const filter = transitionAbsent !== undefined && Array.isArray(allowed);
    if (!retag && !old && !filter && (!shift || (!error.errors?.length && !error.detail))) return error;
    const field = (e: FieldError): FieldError =>
      shift ? { ...e, pointer: shift.pointer(e.pointer), message: shift.message(e.message) } : e;
    const extensions = {
      ...error.extensions,
      ...(retag ? { currentEtag: versionedTag(etag, tagged) } : {}),
      ...(filter ? { allowedTransitions: allowed.filter((t) => !transitionAbsent(String(t))) } : {}),
    };
    return new ApiError(
      old?.code ?? error.code,
      error.detail === undefined || !shift ? error.detail : shift.message(error.detail),
      error.errors?.map(field),
      retag || filter ? extensions : error.extensions,
      error.headers,
      old?.status ?? error.status,
    );
  };

/**
 * Part 9 on the server: every route but the built-in pages learns its version before the body is read (the
 * scheme, else the caller's key, else the default), answers in it, and says so. A request in an older version has
 * its body shifted up to the newest before validation and its answer shifted back down; the newest costs a lookup.
 */
export const versioningPart: ServerPart = {
  name: 'versioning',
  async install(host) {
    const { plan, ctx } = host;
    const versioning: VersioningPlan | undefined = plan.versioning;
    if (!versioning) return;
    const modules = (plan.spec.versioning?.versions ?? []).flatMap((v) =>
      (v.changes ?? []).flatMap((c) => (c.transform ? [c.transform] : [])),
    );
    await loadTransforms(plan.dir, modules, versioning.transforms);
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
      // The versions this route is not part of: added after them, or removed in them or before.
      const absentIn = new Set(ids.filter((v) => versioning.absent.get(v)?.has(route.operation)));
      const resource = route.kind.resource;
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
        if (absentIn.has(id)) throw new ApiError('not_found', 'No such path.');
        const absent = versioning.absent.get(id);
        const transitionAbsent = absent && resource ? (t: string) => absent.has(`${resource}.${t}`) : undefined;
        const codes = versioning.errors.get(id);
        if (id === newest) {
          if (transitionAbsent) exchange.reshapeError = shiftError(undefined, undefined, undefined, transitionAbsent);
          return;
        }
        const shift = shiftOf(exchange);
        const tagged = resource && !route.kind.custom && records.differs(id, resource) ? id : undefined;
        if (tagged)
          for (const name of CONDITIONS) {
            const given = request.headers[name];
            if (typeof given === 'string') request.headers[name] = newestTags(given, tagged);
          }
        if (!shift && !tagged && !codes && !transitionAbsent) return;
        exchange.reshapeError = shiftError(shift, tagged, codes, transitionAbsent);
        if (list && shift) shiftQuery(request.query as Record<string, unknown>, shift);
      };
    });

    host.step('parse', (route): Step | undefined => {
      const { resource, action, custom, transition } = route.kind;
      if (!resource || custom || !(WRITES.has(action) || transition)) return undefined;
      // A transition's input names record fields: it is shifted as a partial update is (renamed, moved, refused
      // where the caller's version lacks a field; no defaults filled).
      const as = (transition ? 'update' : action) as WriteAction;
      return (exchange) => {
        if (exchange.version === newest) return;
        const shift = shiftOf(exchange);
        if (!shift || exchange.body === undefined) return;
        try {
          exchange.body = shift.up(exchange.body, as);
        } catch (error) {
          if (error instanceof ApiError) inCallerNames.add(error);
          throw error;
        }
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
