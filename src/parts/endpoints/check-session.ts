import { type CheckContext, isRecord } from '../../spec/check-context.ts';
import type { PathSegment } from '../../spec/source-map.ts';
import { suggestion } from '../../spec/validate-shape.ts';
import { fieldMap, knownFieldNames, type Raw } from '../resources/lookup.ts';

/**
 * A session (sign-up, sign-in, tokens) needs a bearer JWT scheme that can sign (a secret), a unique identifier
 * field and a password field on its resource, and a token member that no field or view member already names.
 */
export const checkSession = (ctx: CheckContext, name: string, resource: Raw, session: unknown) => {
  if (!isRecord(session)) return;
  const path: PathSegment[] = ['endpoints', name, 'session'];
  // What the spec left to a default is reported at the session itself.
  const report = (at: string | undefined, message: string) =>
    at === undefined
      ? ctx.report('invalid-session', path, message, 'key')
      : ctx.report('invalid-session', [...path, at], message);
  const schemes = isRecord(ctx.spec.auth) && isRecord(ctx.spec.auth.schemes) ? ctx.spec.auth.schemes : {};
  if (typeof session.scheme === 'string') {
    const scheme = schemes[session.scheme];
    if (!isRecord(scheme))
      report('scheme', `no scheme "${session.scheme}"${suggestion(session.scheme, Object.keys(schemes))}`);
    else if (scheme.type !== 'bearer' || typeof scheme.secret !== 'string')
      report('scheme', `"${session.scheme}" cannot sign tokens: a session needs a bearer scheme with a \`secret\``);
  }
  const fields = fieldMap(resource);
  if (typeof session.identifier === 'string') {
    const field = fields.get(session.identifier);
    if (!field)
      report(
        'identifier',
        `${name} has no field "${session.identifier}"${suggestion(session.identifier, [...fields.keys()])}`,
      );
    else if (field.unique !== true) report('identifier', `${session.identifier} must be unique to name one user`);
  }
  const password = typeof session.password === 'string' ? session.password : 'password';
  const passwordField = fields.get(password);
  if (passwordField?.type !== 'string')
    report(
      session.password === undefined ? undefined : 'password',
      `${name} has no string field "${password}" to hold the password (sign-in checks it)`,
    );
  const token = typeof session.field === 'string' ? session.field : 'token';
  const views = isRecord(resource.views) ? Object.values(resource.views).filter(isRecord) : [];
  const viewNames = views.flatMap((v) => (isRecord(v.computed) ? Object.keys(v.computed) : []));
  if (knownFieldNames(resource).has(token) || viewNames.includes(token))
    report(
      session.field === undefined ? undefined : 'field',
      `"${token}" is already a field of ${name}; name the token member otherwise`,
    );
};
